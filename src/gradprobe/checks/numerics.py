"""Numerics: where the first NaN or infinity was born, in the forward pass or in a backward
formula, and gradients that became non-finite."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import torch

from gradprobe._recorder import (
    Events,
    NonFinite,
    SourceLine,
)
from gradprobe.checks._api import Check, Run, register
from gradprobe.checks._common import _locations, _top_modules, _where
from gradprobe.findings import Finding, LocationRole, make_finding

__all__ = ["NonFiniteOrigin"]


@register
class NonFiniteOrigin(Check):
    """The op that first produced NaN/Inf from finite inputs (GP201, GP202)."""

    name = "gradprobe.numerics.non_finite_origin"
    codes = ("GP201", "GP202")
    reads_modules = True

    def conclude(self, run: Run) -> Iterable[Finding]:
        return _nan_findings(run.events, list(run.modules))


# -- analyses ---------------------------------------------------------------------------


def _in_module(module: tuple[str, str] | None) -> str:
    if module is None:
        return ""
    name, kind = module
    return f" in module '{name}' ({kind})" if name else f" in the {kind} model's own forward"


def _parameter_name(ident: int, modules: Sequence[torch.nn.Module]) -> str | None:
    """The qualified name of the parameter with ``id`` ``ident`` in the outermost module
    (of the script's models) that holds it."""
    for module in _top_modules(modules):
        for name, param in module.named_parameters():
            if id(param) == ident:
                return name
    return None


def _nan_findings(events: Events, modules: Sequence[torch.nn.Module] = ()) -> list[Finding]:
    found: list[Finding] = []
    nan, inf = events.first_nan, events.first_inf
    # the infinity that explains a NaN: one computed, not one written on purpose (a mask)
    source = events.first_born or (inf if inf is not None and not inf.deliberate else None)
    if nan is not None and nan.in_step:
        found.append(_nan_from_step(nan, source, events))
    elif nan is not None:
        found.append(_nan_in_forward(nan, inf, events.first_born, events.first_plain))
    for ident, described, shape, is_nan in [] if events.amp else events.nan_grads[:1]:
        pairs: list[tuple[SourceLine | None, LocationRole]]
        what = "NaN" if is_nan else "infinite"
        qualified = _parameter_name(ident, modules)
        name = qualified or described
        subject = f"parameter '{qualified}' {tuple(shape)}" if qualified else f"a {described}"
        if nan is not None and nan.in_step:
            record = events.nodes.get(events.nan_node) if events.nan_node else None
            if source is None and record is not None and events.nan_node is not None:
                message = (
                    f"The gradient of {subject} is {what}, and the optimizer step at "
                    f"{_where(nan.line)} applied it. The forward values were finite: the "
                    f"backward of {events.nan_node[0]} (made at {_where(record.line)}) turned "
                    "finite gradients into NaN/Inf at the edge of its domain (acos/asin at "
                    "±1, sqrt or norm at 0, log of 0, division by 0). Keep its input inside "
                    "the domain (clamp to ±(1 - eps), add an eps)."
                )
                pairs = [(record.line, "cause"), (nan.line, "read")]
            else:
                message = (
                    f"The gradient of {subject} is {what}, and the optimizer step at "
                    f"{_where(nan.line)} applied it"
                    + (
                        f"; it comes from the infinity {source.op} made at {_where(source.line)}"
                        if source is not None and source.order < nan.order
                        else ""
                    )
                    + " (see GP201)."
                )
                pairs = []
        elif nan is not None:
            message = (
                f"The gradient of {subject} is {what}; the forward pass already produced NaN "
                f"at {_where(nan.line)} (see GP201)."
            )
            pairs = []
        elif inf is not None and not (inf.deliberate and events.nan_node is not None):
            message = (
                f"The gradient of {subject} is {what}, although the forward values that "
                f"reached the loss were finite: {inf.op} at {_where(inf.line)} produced an "
                "infinity (shape "
                f"{inf.shape}) whose backward formula multiplies it by 0, giving NaN. This is "
                "typical of torch.where/masking: mask the input of the unsafe operation, not "
                "only its output."
            )
            pairs = [(inf.line, "cause")]
        elif events.nan_node is not None:
            record = events.nodes.get(events.nan_node)
            made = record.line if record is not None else None
            message = (
                f"The gradient of {subject} is {what} although the forward pass was finite: "
                f"the backward of {events.nan_node[0]} (made at {_where(made)}) turned finite "
                "gradients into NaN/Inf, at the edge of its domain (sqrt or norm at 0, log of "
                "0, division by 0). Add an eps inside it, or mask its input."
            )
            pairs = [(made, "cause")]
        else:
            message = (
                f"The gradient of {subject} is {what} although the forward pass was finite: a "
                "backward formula divided by zero or overflowed (sqrt/norm/pow at 0, log of 0)."
            )
            pairs = []
        found.append(
            make_finding(
                "GP202",
                message=message,
                tensor=name,
                locations=_locations(*pairs),
                details={"shape": list(shape)},
            )
        )
    return found


# reductions whose result is NaN when every entry of a row is -inf (a fully masked row)
_ROW_REDUCTIONS = frozenset(("softmax", "log_softmax", "logsumexp", "_softmax", "_log_softmax"))


def _nan_in_forward(
    nan: NonFinite, inf: NonFinite | None, born: NonFinite | None, plain: NonFinite | None
) -> Finding:
    """GP201: the cause is where the first non-finite value was computed from finite ones.

    An infinity an op computed from finite inputs (an overflowing ``exp``, ``log`` of 0)
    that later becomes NaN (``inf / inf``, ``inf - inf``) is the cause; the NaN is where it
    showed. An infinity written on purpose (a ``-inf`` mask) is not a mistake: then the
    op that turned it into NaN (``0 * -inf``) is.
    """
    module = nan.module[0] or nan.module[1] if nan.module else None
    if not nan.born and nan.plain and plain is not None and plain.order < nan.order:
        return make_finding(
            "GP201",
            message=(
                f"The first non-finite value was born outside the graph: {plain.op} at "
                f"{_where(plain.line)} computed {'NaN' if plain.nan else 'an infinity'} "
                f"from finite values (output shape {plain.shape}) in a tensor that does not "
                f"require grad (data, a target, a no_grad step); it reached {nan.op} at "
                f"{_where(nan.line)}"
                + _in_module(nan.module)
                + ". Guard that computation (an eps or clamp in the division or std, a check "
                "of the data)."
            ),
            node=plain.op,
            module=module,
            locations=_locations((plain.line, "cause"), (nan.line, "read")),
            details={"first_non_finite": plain.op, "first_nan": nan.op, "outside_graph": True},
        )
    if born is not None and born.order < nan.order:
        return make_finding(
            "GP201",
            message=(
                f"The first non-finite value of the forward pass was an infinity that "
                f"{born.op} computed from finite inputs at {_where(born.line)}"
                + _in_module(born.module)
                + f" (output shape {born.shape}); it turned into NaN at {nan.op} at "
                f"{_where(nan.line)}. Keep {born.op}'s input in range (subtract the max "
                "before exp, clamp or add an eps before log and division), or use the "
                "stable form (logsumexp, log_softmax)."
            ),
            node=born.op,
            module=module,
            locations=_locations((born.line, "cause"), (nan.line, "read")),
            details={"first_non_finite": born.op, "first_nan": nan.op},
        )
    earlier = inf is not None and inf.order < nan.order
    pairs: list[tuple[SourceLine | None, LocationRole]] = [(nan.line, "cause")]
    if inf is not None and earlier and inf.deliberate and nan.op in _ROW_REDUCTIONS:
        # softmax over a row whose every entry the mask set to -inf: the mask is what to
        # change (keep one position per row), softmax can only pass the NaN on
        pairs = [(inf.line, "cause"), (nan.line, "read")]
    elif inf is not None and earlier:
        pairs.append((inf.line, "created"))
    return make_finding(
        "GP201",
        message=(
            f"The first NaN of the forward pass came from {nan.op} at {_where(nan.line)}"
            + _in_module(nan.module)
            + f" (output shape {nan.shape})"
            + (
                f"; it combined an infinity {'written on purpose ' if inf.deliberate else ''}"
                f"by {inf.op} at {_where(inf.line)}"
                if inf is not None and earlier
                else ""
            )
            + "."
        ),
        node=nan.op,
        module=module,
        locations=_locations(*pairs),
    )


def _nan_from_step(nan: Any, inf: Any, events: Events) -> Finding:
    """GP201 when the first NaN was written by an optimizer step: the parameters took
    non-finite gradients, so the cause is wherever those came from."""
    message = (
        f"The first NaN of the run was written into the parameters by the optimizer step at "
        f"{_where(nan.line)} ({nan.op}): the gradients it applied were not finite, and every "
        "forward pass after it is NaN."
    )
    pairs: list[tuple[SourceLine | None, LocationRole]] = [(nan.line, "read")]
    if inf is not None and inf.order < nan.order:
        message += (
            f" They come from an infinity that {inf.op} produced earlier at {_where(inf.line)}"
            + _in_module(inf.module)
            + f" (shape {inf.shape}): an infinite value on the way to the loss makes the "
            "backward produce inf and NaN. Make that operation safe (log_softmax instead of "
            "log(softmax(...)), a clamp or an eps inside log, sqrt and division); if the "
            "values grew over several steps instead, lower the learning rate or clip the "
            "gradients."
        )
        pairs.insert(0, (inf.line, "cause"))
    else:
        message += " The forward values were finite: see GP202 for where the backward broke."
    return make_finding(
        "GP201",
        message=message,
        node=nan.op,
        locations=_locations(*pairs),
        details={"in_optimizer_step": True},
    )
