"""Findings of a watch session, from host data only (records, hits, dead-ReLU counts).

* GP201 nan_in_forward: the first non-finite activation (step, module, output).
* GP202 nan_in_backward: the first non-finite gradient in backward order.
* GP203 exploding_gradient: the first parameter gradient norm above the threshold.
* GP204 vanishing_gradient: parameter gradient norms below the threshold at the latest
  sampled step (and at the sampled step before it, when the history has one).
* GP205 dead_relu: ReLU modules whose units never fired over the rows seen.
* GP107 parameter_without_grad: watched parameters that got no gradient in a step whose
  backward reached other watched parameters.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from gradprobe._watch.records import StepRecord, TensorStats
from gradprobe.findings import Finding, Location, make_finding

__all__ = ["MIN_ROWS", "DeadRelu", "Hit", "Thresholds", "first_hits", "watch_findings"]

MIN_ROWS = 32
"""A ReLU is judged only after this many rows (inputs × positions) were seen on sampled steps."""

# A dead ReLU comes before vanishing gradients: it is a cause, and the exactly-zero
# gradients behind it are its symptom.
_ORDER = {"GP201": 0, "GP202": 1, "GP203": 2, "GP205": 3, "GP204": 4, "GP107": 5}


@dataclass(frozen=True)
class Thresholds:
    """The session's limits: gradient norms and the dead fraction of a ReLU's units."""

    exploding: float
    vanishing: float
    dead_relu: float


@dataclass(frozen=True)
class Hit:
    """The first occurrence of something, at ``step``: an activation or a gradient.

    ``min`` and ``max`` are known on sampled steps; between them only ``total``, the sum
    of the values that the NaN/Inf check looks at.
    """

    step: int
    kind: Literal["activation", "output", "parameter"]
    name: str
    type: str
    call: int
    output: str
    min: float | None
    max: float | None
    value: float = math.nan
    stats: TensorStats | None = None
    total: float | None = None

    @property
    def label(self) -> str:
        if self.kind == "parameter":
            return self.name
        text = (self.name or "(model)") + self.output
        return text if self.call == 0 else f"{text} (call {self.call + 1})"


@dataclass(frozen=True)
class DeadRelu:
    """How many of a ReLU module's units never fired, over ``rows`` rows."""

    module: str
    type: str
    dead: int
    units: int
    rows: int


def _only_infinities(stats: Any) -> bool:
    """No NaN, only ±inf: in a model input that is an additive attention mask
    (``generate_square_subsequent_mask``), not bad data."""
    if stats.nan_count is not None:
        return bool(stats.nan_count == 0)
    return not stats.has_nan


def first_hits(records: Iterable[StepRecord], thresholds: Thresholds) -> dict[str, Hit]:
    """The first non-finite activation (``"forward"``), non-finite gradient
    (``"backward"``) and exploding parameter gradient (``"exploding"``) in ``records``."""
    hits: dict[str, Hit] = {}
    for record in records:
        if "forward" not in hits:
            for a in record.activations:
                if not a.stats.finite and not (a.type == "input" and _only_infinities(a.stats)):
                    hits["forward"] = Hit(
                        record.step,
                        "activation",
                        a.module,
                        a.type,
                        a.call,
                        a.output,
                        a.stats.min,
                        a.stats.max,
                        stats=a.stats,
                        total=a.stats.total,
                    )
                    break
        for g in record.gradients:
            kind: Literal["output", "parameter"] = g.kind
            if "backward" not in hits and not g.stats.finite:
                hits["backward"] = Hit(
                    record.step,
                    kind,
                    g.name,
                    "",
                    g.call,
                    g.output,
                    g.stats.min,
                    g.stats.max,
                    stats=g.stats,
                    total=g.stats.total,
                )
            norm = g.stats.norm
            if (
                "exploding" not in hits
                and kind == "parameter"
                and norm is not None
                and norm > thresholds.exploding
            ):
                hits["exploding"] = Hit(
                    record.step,
                    "parameter",
                    g.name,
                    "",
                    0,
                    "",
                    g.stats.min,
                    g.stats.max,
                    value=norm,
                    stats=g.stats,
                )
    return hits


def _what(hit: Hit) -> str:
    low, high = hit.min, hit.max
    if low is None or high is None:
        # Between samples only the sum is known: NaN from a NaN or from +Inf and -Inf
        # together, ±Inf from an infinity or (rarely) from finite values that overflow it.
        total = math.nan if hit.total is None else hit.total
        if math.isnan(total):
            return "NaN (or +Inf and -Inf)"
        return ("+Inf" if total > 0 else "-Inf") + " (or values whose sum overflows)"
    if math.isnan(low) or math.isnan(high):
        return "NaN"
    if high == math.inf and low == -math.inf:
        return "+Inf and -Inf"
    return "+Inf" if high == math.inf else "-Inf"


def _counts(stats: TensorStats | None) -> str:
    if stats is None or stats.nan_count is None:
        return ""
    parts = []
    if stats.nan_count:
        parts.append(f"{stats.nan_count} NaN")
    if stats.inf_count:
        parts.append(f"{stats.inf_count} Inf")
    return f" ({', '.join(parts)} of {stats.numel} values)" if parts else ""


def _hit_details(hit: Hit) -> dict[str, object]:
    details: dict[str, object] = {
        "step": hit.step,
        "kind": hit.kind,
        "name": hit.name,
        "call": hit.call,
        "output": hit.output,
        "min": hit.min,
        "max": hit.max,
        "total": hit.total,
    }
    if hit.stats is not None:
        details["shape"] = list(hit.stats.shape)
        details["nan_count"] = hit.stats.nan_count
        details["inf_count"] = hit.stats.inf_count
    return details


def _tensor(hit: Hit) -> str | None:
    if hit.stats is None:
        return None
    return f"{hit.label} {tuple(hit.stats.shape)} {hit.stats.dtype}"


def watch_findings(
    *,
    records: Sequence[StepRecord],
    hits: Mapping[str, Hit],
    dead: Sequence[DeadRelu],
    without_grad: Mapping[str, tuple[int, int]],
    grad_steps: int,
    thresholds: Thresholds,
    sources: Mapping[str, Location],
    parameter_order: Sequence[str] = (),
) -> list[Finding]:
    """Every finding, most severe code first. ``hits`` come from steps older than
    ``records`` (evicted from the history) and win over hits found in ``records``."""
    merged = dict(first_hits(records, thresholds))
    merged.update(hits)
    found: list[Finding] = []
    forward = merged.get("forward")
    if forward is not None:
        who = (
            f"module {forward.label!r} ({forward.type})" if forward.type != "input" else "the input"
        )
        found.append(
            make_finding(
                "GP201",
                message=(
                    f"The output of {who} held {_what(forward)} at step "
                    f"{forward.step}{_counts(forward.stats)}: the first non-finite value "
                    "in forward order. What came before it in this step was finite, so "
                    "this module (or code between it and the previous watched module) "
                    "produced it."
                    if forward.type != "input"
                    else f"The model's input held {_what(forward)} at step "
                    f"{forward.step}{_counts(forward.stats)}: the data is bad before any "
                    "module runs."
                ),
                hint=None
                if forward.type != "input"
                else "Check the data pipeline for "
                "NaN/Inf (torch.isfinite(batch).all()) before it reaches the model.",
                tensor=_tensor(forward),
                module=forward.name if forward.type != "input" else None,
                locations=[sources[forward.name]] if forward.name in sources else [],
                details=_hit_details(forward),
            )
        )
    backward = merged.get("backward")
    if backward is not None:
        what = _what(backward)
        if backward.kind == "parameter":
            message = (
                f"The gradient of parameter {backward.name!r} held {what} at step "
                f"{backward.step}{_counts(backward.stats)}, the first non-finite gradient "
                "in backward order"
            )
            blame = ": the backward of the module that owns it produced it."
        else:
            message = (
                f"The gradient flowing into the output of module {backward.label!r} held "
                f"{what} at step {backward.step}{_counts(backward.stats)}, the first "
                "non-finite gradient in backward order"
            )
            blame = ": it came from the operations after this module (or from the loss)."
        if forward is not None and forward.step <= backward.step:
            blame = (
                f"; the forward pass was already non-finite at step {forward.step} (GP201), "
                "which explains it."
            )
        message += blame
        found.append(
            make_finding(
                "GP202",
                message=message,
                tensor=_tensor(backward),
                module=backward.name if backward.kind == "output" else None,
                parameter=backward.name if backward.kind == "parameter" else None,
                details=_hit_details(backward),
            )
        )
    exploding = merged.get("exploding")
    if exploding is not None:
        found.append(
            make_finding(
                "GP203",
                message=(
                    f"The gradient of {exploding.name!r} had L2 norm {exploding.value:.3g} at "
                    f"step {exploding.step}, above watch(exploding={thresholds.exploding:g}); "
                    "the first sampled step where a parameter gradient crossed it."
                ),
                parameter=exploding.name,
                details={**_hit_details(exploding), "norm": exploding.value},
            )
        )
    dead_relus = [
        relu
        for relu in dead
        if relu.units and relu.rows >= MIN_ROWS and relu.dead / relu.units >= thresholds.dead_relu
    ]
    zeroed = _zeroed_by(records, dead_relus, parameter_order)
    # Every unit off in every row, but too few rows for GP205: the exact zeros behind it
    # stay GP204, which names that ReLU as their likely cause instead of calling them small.
    silent = {
        relu.module: relu
        for relu in dead
        if relu.units and 0 < relu.rows < MIN_ROWS and relu.dead == relu.units
    }
    suspects = _zeroed_by(records, list(silent.values()), parameter_order)
    found.extend(
        _vanishing(
            records,
            thresholds,
            parameter_order,
            explained=zeroed,
            suspects=[(silent[module], names) for module, names in suspects.items()],
        )
    )
    for relu in dead_relus:
        message = (
            f"{relu.dead} of {relu.units} units of {relu.module!r} ({relu.type}) never "
            f"fired: their output was 0 for all {relu.rows} rows seen on sampled steps."
        )
        behind = zeroed.get(relu.module, [])
        if behind:
            message += (
                " No gradient flows back through it: "
                + ", ".join(repr(name) for name in behind)
                + f" got {'an exactly zero gradient' if len(behind) == 1 else 'exactly zero gradients'}."
            )
        found.append(
            make_finding(
                "GP205",
                message=message,
                module=relu.module,
                locations=[sources[relu.module]] if relu.module in sources else [],
                details={
                    "dead": relu.dead,
                    "units": relu.units,
                    "rows": relu.rows,
                    "fraction": relu.dead / relu.units,
                    **({"zero_gradients": list(behind)} if behind else {}),
                },
            )
        )
    for name, (first, count) in without_grad.items():
        owner = name.rpartition(".")[0]
        found.append(
            make_finding(
                "GP107",
                message=(
                    f"{name!r} got no gradient in {count} of the {grad_steps} steps whose "
                    f"backward reached other watched parameters (first at step {first})."
                ),
                parameter=name,
                module=owner or None,
                details={"first_step": first, "steps": count, "of": grad_steps},
            )
        )
    order = {name: i for i, name in enumerate(parameter_order)}
    found.sort(key=lambda f: (_ORDER.get(f.code, 9), order.get(f.parameter or "", 0)))
    return found


def _silent_relu_text(relu: DeadRelu, behind: Sequence[str]) -> str:
    names = ", ".join(repr(name) for name in behind)
    return (
        f" {names} {'is' if len(behind) == 1 else 'are'} exactly zero behind {relu.module!r} "
        f"({relu.type}), none of whose {relu.units} units fired in the {relu.rows} rows seen: "
        f"likely a dead ReLU, not a small gradient (GP205 judges a ReLU after {MIN_ROWS} rows)."
    )


_CANCELS_BIAS = ("BatchNorm", "InstanceNorm")


def _biases_before_norm(records: Sequence[StepRecord]) -> set[str]:
    """Biases of modules whose output goes straight into BatchNorm/InstanceNorm, which
    subtracts the per-channel mean: their gradient is zero up to rounding, by design."""
    for record in reversed(records):
        seen = [(a.module, a.type) for a in record.activations if a.type != "input"]
        if seen:
            return {
                f"{name}.bias"
                for (name, _), (_, after) in itertools.pairwise(seen)
                if after.startswith(_CANCELS_BIAS)
            }
    return set()


def _norms(record: StepRecord) -> dict[str, float]:
    return {
        name: stats.norm for name, stats in record.parameter_grads.items() if stats.norm is not None
    }


def _zeroed_by(
    records: Sequence[StepRecord], dead: Sequence[DeadRelu], parameter_order: Sequence[str]
) -> dict[str, list[str]]:
    """For each dead ReLU, the parameters whose gradient was exactly zero at the latest
    sampled step because of it: those of the modules that ran before it, and the weights of
    the first module after it that has parameters (its input is the ReLU's zeros)."""
    if not dead:
        return {}
    latest = next((record for record in reversed(records) if _norms(record)), None)
    if latest is None:
        return {}
    norms = _norms(latest)
    order: list[str] = []
    for activation in latest.activations:
        if activation.module not in order and activation.type != "input":
            order.append(activation.module)
    owners: dict[str, list[str]] = {}
    for name in norms:
        owners.setdefault(name.rpartition(".")[0], []).append(name)
    out: dict[str, list[str]] = {}
    for relu in dead:
        if relu.module not in order:
            continue
        at = order.index(relu.module)
        candidates = [name for owner in order[:at] for name in owners.get(owner, [])]
        after = next((owner for owner in order[at + 1 :] if owner in owners), None)
        if after is not None:
            candidates.extend(n for n in owners[after] if not n.endswith(".bias"))
        rank = {name: i for i, name in enumerate(parameter_order)}
        zero = sorted(
            (name for name in candidates if norms[name] == 0.0),
            key=lambda name: rank.get(name, len(rank)),
        )
        if zero:
            out[relu.module] = zero
    return out


def _vanishing(
    records: Sequence[StepRecord],
    thresholds: Thresholds,
    parameter_order: Sequence[str],
    *,
    explained: Mapping[str, Sequence[str]] | None = None,
    suspects: Sequence[tuple[DeadRelu, Sequence[str]]] = (),
) -> list[Finding]:
    by_dead_relu = {name for names in (explained or {}).values() for name in names}
    sampled = [record for record in reversed(records) if _norms(record)]
    for record in sampled[:1]:
        norms = _norms(record)
        # Also small at the sampled step before, when there is one: one step's exactly
        # zero bias gradient (an L1 loss balanced at that step) is not a vanishing gradient.
        before = _norms(sampled[1]) if len(sampled) > 1 else {}
        cancelled = _biases_before_norm(records)
        small = {
            name: norm
            for name, norm in norms.items()
            if norm < thresholds.vanishing
            and before.get(name, 0.0) < thresholds.vanishing
            and name not in cancelled
            and name not in by_dead_relu  # exactly zero behind a dead ReLU: GP205 says so
        }
        if not small:
            return []
        order = {name: i for i, name in enumerate(parameter_order)}
        names = sorted(small, key=lambda n: order.get(n, len(order)))
        shown = ", ".join(f"{n!r} ({small[n]:.2g})" for n in names[:5])
        more = f" and {len(names) - 5} more" if len(names) > 5 else ""
        causes = [(relu, [name for name in behind if name in small]) for relu, behind in suspects]
        causes = [(relu, behind) for relu, behind in causes if behind]
        cause_text = "".join(_silent_relu_text(relu, behind) for relu, behind in causes)
        return [
            make_finding(
                "GP204",
                message=(
                    f"{len(names)} of {len(norms)} parameter gradients had L2 norm below "
                    f"watch(vanishing={thresholds.vanishing:g}) at step {record.step}: "
                    f"{shown}{more}.{cause_text}"
                ),
                parameter=names[0],
                details={
                    "step": record.step,
                    "norms": small,
                    "of": len(norms),
                    **(
                        {"zero_behind": {relu.module: behind for relu, behind in causes}}
                        if causes
                        else {}
                    ),
                },
            )
        ]
    return []
