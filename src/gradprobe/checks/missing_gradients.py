"""Missing gradients: why a ``.grad`` is None or a parameter learns nothing.

Cuts in the graph (``.detach()``, ``.data``, ``no_grad``, ``.item()``), ``.grad`` read on a
non-leaf, constant loss terms, backward on a leaf or a non-scalar, requires_grad turned on
too late, and operations whose derivative is zero almost everywhere.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any

import torch

from gradprobe._compat import NO_GRAD_FN_TEXT, NONSCALAR_ERROR, UNUSED_INPUT_ERROR
from gradprobe._pictures import cuts_slice
from gradprobe._recorder import (
    Backward,
    Events,
    GradRead,
    NodeKey,
    Reparam,
    SourceLine,
    _names_at,
)
from gradprobe._recorder import events as recorded
from gradprobe._recorder.events import Cut, OpLine
from gradprobe._recorder.ops import ZERO_DERIVATIVE
from gradprobe._recorder.owners import qualified_owner
from gradprobe._recorder.switches import GRAD
from gradprobe._source import shown_file, traceback_location
from gradprobe.checks._api import BackwardCall, Check, OpCall, Run, register
from gradprobe.checks._common import (
    _locations,
    _top_modules,
    _where,
    backpropagated,
    location,
)
from gradprobe.checks.raised import grad_without_graph
from gradprobe.errors import error_text
from gradprobe.findings import Finding, LocationRole, make_finding

__all__ = [
    "FlatGradients",
    "GraphCut",
    "LateRequiresGrad",
    "LeafBackward",
    "NonLeafGradRead",
    "NoneGradUsed",
    "UnusedGradInput",
    "UnusedParameters",
]

_MAX_FLAT = 100  # zero-derivative calls remembered per recording


@register
class NonLeafGradRead(Check):
    """``.grad`` read on a tensor that is not a leaf (GP106)."""

    name = "gradprobe.missing_gradients.non_leaf_grad"
    codes = ("GP106",)

    def conclude(self, run: Run) -> Iterable[Finding]:
        return _grad_reads(run.events)


@register
class GraphCut(Check):
    """A loss, or a term of it, with no path back to what should learn: ``backward()`` on
    a tensor without ``grad_fn`` (GP104, GP105) and constant loss terms (GP113)."""

    name = "gradprobe.missing_gradients.graph_cut"
    codes = ("GP104", "GP105", "GP113")

    def on_backward_error(self, call: BackwardCall) -> Iterable[Finding]:
        text = "" if call.error is None else str(call.error)
        if _NONSCALAR in text:
            return _nonscalar(call.run.events, call.event, call.roots)
        if _NO_GRAD_FN in text:
            return _no_grad_fn(call.run.events, call.roots, call.run.taint)
        return ()

    def conclude(self, run: Run) -> Iterable[Finding]:
        return _mixes(run.events)

    def on_error(self, run: Run, found: Sequence[Finding]) -> Iterable[Finding]:
        if not isinstance(run.error, Exception):
            return ()
        return scalar_backward(run.events, run.error)


@register
class UnusedGradInput(Check):
    """``autograd.grad`` asked for an input the outputs do not reach (GP140): which one,
    the parameter's name when it is one, and where it was made."""

    name = "gradprobe.missing_gradients.unused_grad_input"
    codes = ("GP140",)

    def on_backward_error(self, call: BackwardCall) -> Iterable[Finding]:
        match = UNUSED_INPUT_ERROR.search("" if call.error is None else str(call.error))
        if match is None:
            return ()
        index = int(match["index"]) if match["index"] is not None else None
        events = call.run.events
        tensor = (
            call.inputs[index]
            if index is not None and index < len(call.inputs)
            else next((t for t in call.inputs if not _reaches(call.roots, t)), None)
        )
        name, owner = _parameter_owner(tensor, call.run.modules)
        subject = f"parameter '{name}'" if name else "the tensor"
        if index is not None:
            subject = f"input {index} ({subject})"
        why = ""
        if owner is not None:
            called = any(m is owner for m in call.run.modules) or id(owner) in call.run.inside
            module = name.rsplit(".", 1)[0] if name and "." in name else type(owner).__name__
            why = f": module '{module}' ({type(owner).__name__}) was " + (
                "not called on the way to the outputs" if called else "never called"
            )
        made = events.module_lines.get(id(owner)) if owner is not None else None
        pairs: tuple[tuple[SourceLine | None, LocationRole], ...] = (
            (call.event.line, "cause"),
            (made, "created"),
        )
        later = _made_after(events, tensor, call.roots)
        if later is not None:  # x = xt[:, 0:1] after u = model(xt): a new tensor
            why = (
                f": it was made at {_where(later)}, after the outputs were computed, so no "
                "output can depend on it (a slice or view taken after the forward is a new "
                "tensor of its own). Make it before the forward and compute the outputs from "
                "it (u = model(torch.cat([x, t], dim=1)))"
            )
            pairs = ((later, "cause"),)  # the recorder adds the call as `error`
        return (
            make_finding(
                "GP140",
                message=(
                    f"{'torch.autograd.grad' if call.event.op == 'grad' else call.event.op} at "
                    f"{_where(call.event.line)} was asked for the gradient "
                    f"of {subject}, which the outputs do not depend on{why}. Ask only for the "
                    "tensors the outputs use, or pass allow_unused=True (None for it; "
                    "materialize_grads=True for zeros)."
                ),
                tensor=name,
                locations=_locations(*pairs),
                details={"index": index, "parameter": name},
            ),
        )


def _made_after(
    events: Events, tensor: torch.Tensor | None, roots: Sequence[torch.Tensor]
) -> SourceLine | None:
    """Where ``tensor`` was made, when an op made it from a leaf the outputs do use (a
    slice of the input taken apart from the forward), or after every output: it is a new
    tensor of its own that nothing computed from that leaf goes through."""
    node = _grad_fn_of(tensor)
    if tensor is None or node is None:
        return None
    sources = [tensor._base] + [
        getattr(fn, "variable", None) for fn, _ in node.next_functions if fn is not None
    ]
    seqs = [fn._sequence_nr() for root in roots if (fn := _grad_fn_of(root)) is not None]
    after = bool(seqs) and node._sequence_nr() > max(seqs)
    if not after and not any(
        isinstance(source, torch.Tensor) and _reaches(roots, source) for source in sources
    ):
        return None
    record = events.nodes.get((node.name(), node._sequence_nr()))
    return record.line if record is not None else None


def _grad_fn_of(tensor: torch.Tensor | None) -> Any:
    return None if tensor is None else tensor.grad_fn


def _reaches(roots: Sequence[torch.Tensor], tensor: torch.Tensor) -> bool:
    from gradprobe._recorder import _leaves_below

    return any(id(tensor) in set(_leaves_below(root, 50_000)) for root in roots)


def _parameter_owner(
    tensor: torch.Tensor | None, modules: Sequence[torch.nn.Module]
) -> tuple[str | None, torch.nn.Module | None]:
    """The qualified name of ``tensor`` among the parameters of the top modules, and the
    module that holds it directly."""
    if tensor is None:
        return None, None
    for top in _top_modules(modules):
        for prefix, module in top.named_modules():
            for pname, param in module.named_parameters(recurse=False):
                if param is tensor:
                    return (f"{prefix}.{pname}" if prefix else pname), module
    return qualified_owner(tensor)


@register
class UnusedParameters(Check):
    """Parameters of the modules that ran that got no gradient, and why (GP107)."""

    name = "gradprobe.missing_gradients.unused_parameters"
    codes = ("GP107",)
    reads_modules = True

    def conclude(self, run: Run) -> Iterable[Finding]:
        return _unused(run.events, run.modules)


@register
class LeafBackward(Check):
    """``backward()`` called on a leaf: nothing behind it to reach (GP115)."""

    name = "gradprobe.missing_gradients.leaf_backward"
    codes = ("GP115",)

    def conclude(self, run: Run) -> Iterable[Finding]:
        return _leaf_backwards(run.events)


@register
class FlatGradients(Check):
    """round/sign/floor between a parameter and the loss: zero gradients (GP120)."""

    name = "gradprobe.missing_gradients.flat_gradients"
    codes = ("GP120",)
    ops = ZERO_DERIVATIVE
    reads_modules = True

    def __init__(self) -> None:
        self.flat: list[OpLine] = []  # those ops applied to values that require grad

    def on_op(self, call: OpCall) -> None:
        if len(self.flat) < _MAX_FLAT and any(
            isinstance(arg, torch.Tensor) and arg.requires_grad for arg in call.args
        ):
            self.flat.append(OpLine(call.line, call.func.__name__))

    def conclude(self, run: Run) -> Iterable[Finding]:
        return _flat_gradients(self.flat, run.events, list(run.modules))


@register
class LateRequiresGrad(Check):
    """``requires_grad`` turned on after the forward used the tensor (GP136)."""

    name = "gradprobe.missing_gradients.late_requires_grad"
    codes = ("GP136",)

    def conclude(self, run: Run) -> Iterable[Finding]:
        return late_leaves(run.events)


@register
class NoneGradUsed(Check):
    """The script failed on a ``.grad`` that was None (GP137)."""

    name = "gradprobe.missing_gradients.none_grad_used"
    codes = ("GP137",)

    def on_error(self, run: Run, found: Sequence[Finding]) -> Iterable[Finding]:
        if not isinstance(run.error, Exception):
            return ()
        return none_grad_used(run.events, run.error, found)


# -- analyses ---------------------------------------------------------------------------


def _nonscalar(events: Events, event: Backward, roots: Sequence[torch.Tensor]) -> list[Finding]:
    for root, key in zip(roots, event.roots, strict=False):
        if root.numel() == 1:
            continue
        record = events.nodes.get(key) if key is not None else None
        line = record.line if record is not None else None
        criterion = _unreduced_criterion(events, key[0] if key else "")
        built = ""
        if criterion is not None:
            built = (
                f" The criterion {criterion[0]} built at {_where(criterion[1])} with "
                "reduction='none' returns one loss per element."
            )
        return [
            make_finding(
                "GP105",
                message=(
                    f"backward() was called on a tensor of shape {tuple(root.shape)} "
                    f"({root.numel()} elements) without a gradient; it was made by "
                    f"{key[0] if key else 'an operation'} at {_where(line)}.{built} Reduce "
                    "it to a scalar there (mean/sum over the batch) or pass a gradient."
                ),
                tensor=f"tensor of shape {tuple(root.shape)}",
                node=key[0] if key else None,
                locations=_locations(
                    (line, "cause"), (criterion[1] if criterion else None, "cause")
                ),
                details={"shape": list(root.shape)},
            )
        ]
    return []


def _unreduced_criterion(events: Events, op: str) -> tuple[str, SourceLine | None] | None:
    """The loss module built with reduction='none' whose op made a non-scalar root: the one
    whose class names the op (MSELoss, MseLossBackward0), else the only one there is."""
    if not events.unreduced_losses or ("loss" not in op.lower() and "entropy" not in op.lower()):
        return None
    short = op.lower().removesuffix("backward0").removesuffix("backward")
    named = [entry for entry in events.unreduced_losses if entry[0].lower() == short]
    if named:
        return named[-1]
    return events.unreduced_losses[-1] if len(events.unreduced_losses) == 1 else None


def _no_grad_fn(
    events: Events,
    roots: Sequence[torch.Tensor],
    taint: Callable[[torch.Tensor], frozenset[int]],
) -> list[Finding]:
    findings: list[Finding] = []
    for root in roots:
        if root.requires_grad:
            continue
        cuts = sorted((events.cuts[i] for i in taint(root)), key=lambda cut: cut.order)
        if not cuts and events.exits:
            # Not computed from a cut value, but values left torch after a cut (.numpy(),
            # .tolist(), .item()) and came back as a new tensor: the latest such cut.
            cuts = [max((events.cuts[i] for i in events.exits), key=lambda cut: cut.order)]
        where = ", ".join(f"{cut.op} ({cut.kind}) at {_where(cut.line)}" for cut in cuts)
        penalty = None if cuts else grad_without_graph(events)
        if penalty is not None:  # a gradient penalty from autograd.grad without a graph
            findings.append(
                make_finding(
                    "GP104",
                    message=(
                        f"The tensor passed to backward() (shape {tuple(root.shape)}) was "
                        f"computed from the gradients torch.autograd.grad returned at "
                        f"{_where(penalty.line)}, called without create_graph=True: those "
                        "gradients are constants with no graph. Pass create_graph=True there "
                        "to differentiate through them (gradient penalties, MAML)."
                    ),
                    locations=_locations((penalty.line, "cause")),
                    details={"cuts": []},
                )
            )
            continue
        finding = make_finding(
            "GP104",
            message=(
                f"The tensor passed to backward() (shape {tuple(root.shape)}) does not "
                "require grad: "
                + (
                    f"its graph was cut by {where}."
                    if cuts
                    else "nothing that requires grad was used to compute it while "
                    "gradients were enabled."
                )
            ),
            locations=_locations(*_cut_causes(cuts)),
            details={"cuts": [cut.op for cut in cuts]},
        )
        # its picture: each cut, fed by the node whose value it cut
        home = cuts[0].line[0] if cuts and cuts[0].line else None
        part = cuts_slice(events, [cut.ident for cut in cuts], home=home)
        findings.append(replace(finding, graph_slice=part) if part is not None else finding)
    return findings


def _cut_causes(cuts: Sequence[Any]) -> list[tuple[SourceLine | None, LocationRole]]:
    """The lines to blame for cuts, at most two. A cut under no_grad blames the line that
    turned gradients off; the op that ran there is where the value was ``created``."""
    pairs: list[tuple[SourceLine | None, LocationRole]] = []
    made: list[tuple[SourceLine | None, LocationRole]] = []
    for cut in cuts:
        context = getattr(cut, "context", None)
        line = context if context is not None else cut.line
        if line is not None and (line, "cause") not in pairs and len(pairs) < 2:
            pairs.append((line, "cause"))
            if context is not None and cut.line is not None:
                made.append((cut.line, "created"))
    return pairs + made


def scalar_backward(events: Events, error: BaseException) -> list[Finding]:
    """``loss.item().backward()``: the loss became a Python number at an ``.item()``."""
    if not isinstance(error, AttributeError) or "attribute 'backward'" not in error_text(error):
        return []
    # values that left torch: .item() / float() of a tensor that required grad, or a
    # detached tensor's .numpy() (a numpy float has no backward either)
    items = [cut for cut in events.cuts.values() if cut.kind == "item"]
    items += [events.cuts[i] for i in events.exits if i in events.cuts]
    if not items:
        return []
    last = max(items, key=lambda cut: cut.order)
    failed = traceback_location(error.__traceback__)
    return [
        make_finding(
            "GP104",
            message=(
                f"backward() was called on a Python or NumPy number: the values left "
                f"autograd at {_where(last.line)} ({last.op}()), and a plain number has no "
                "graph. Keep the tensor for backward and call .item() / .numpy() only for "
                "logging."
            ),
            locations=(*_locations((last.line, "cause")), *([failed] if failed else [])),
        )
    ]


def _flat_gradients(
    flat_ops: Sequence[OpLine], events: Events, modules: Sequence[torch.nn.Module]
) -> list[Finding]:
    """GP120 when parameter gradients are exactly zero and the forward went through an op
    whose derivative is zero (round, floor, sign, ...): every parameter of a model, or the
    ones before that op while the ones after it learn."""
    if not flat_ops or not any(b.error is None for b in events.backwards):
        return []
    flat: list[str] = []
    learning = False  # some parameter got a gradient that is not all zero
    tops = _top_modules(modules)
    for top in tops:
        prefix = f"{type(top).__name__}." if len(tops) > 1 else ""  # layers called directly
        for name, param in top.named_parameters():
            grad = param.grad
            if grad is None or grad.device.type != "cpu":
                continue
            if bool(grad.count_nonzero()):
                learning = True
            else:
                flat.append(prefix + name)
    if not flat:
        return []
    every = not learning
    line, op = flat_ops[0]
    if every:
        what = "Every parameter gradient of a model is exactly zero"
        reach = "nothing before it can learn"
    else:
        names = ", ".join(flat[:4]) + (f" and {len(flat) - 4} more" if len(flat) > 4 else "")
        what = f"The gradients of {names} are exactly zero"
        reach = "the parameters before it cannot learn"
    return [
        make_finding(
            "GP120",
            message=(
                f"{what}, and the forward pass went through {op} at {_where(line)}, whose "
                f"derivative is zero everywhere it exists: {reach}. Use a differentiable "
                "relaxation there (the probabilities themselves, or a straight-through "
                "estimator x + (x.round() - x).detach())."
            ),
            node=op,
            locations=_locations((line, "cause")),
            details={"parameters": flat[:20]},
        )
    ]


def _leaf_backwards(events: Events) -> list[Finding]:
    if not events.leaf_backwards:
        return []
    leaf = events.leaf_backwards[0]
    no_grad, switched = leaf.origin
    left_off = events.switches.get(GRAD)
    if not leaf.grad_on and no_grad is None and left_off is not None and left_off.value == "False":
        return []  # gradients left off by a plain set_grad_enabled(False): GP174 names it
    if no_grad is not None and switched is not None:
        return [_band_aid(leaf.line, no_grad, switched)]
    if leaf.ident in events.fed:
        return []  # the leaf is what an optimizer trains: latent or input optimisation
    cut, traced = _leaf_source(events, leaf)
    if leaf.through and cut is None:
        return []  # a loss on tensors of the user's own making, with nothing cut on the way
    where = _where(leaf.made) if leaf.made else "its own line"
    whence = (
        f" The values it was made from left autograd at {_where(cut.line)} "
        f"({'.data' if cut.kind == 'data' else cut.op + '()'})."
        if cut is not None
        else ""
    )
    if leaf.through:
        text = (
            f"backward() at {_where(leaf.line)} reached no parameter: the graph of the tensor "
            f"it was called on ends at a tensor made at {where} and given requires_grad, a "
            f"new leaf connected to nothing, so no parameter gets a gradient.{whence} Build "
            "the loss from the tensors themselves (torch.stack, not torch.tensor of a list; "
            "no .item(), float() or .numpy() on the way) and drop the requires_grad."
        )
    else:
        text = (
            f"backward() at {_where(leaf.line)} was called on a leaf tensor"
            + (f" made at {_where(leaf.made)}" if leaf.made else "")
            + ": it has no graph behind it, so backward only fills that tensor's own "
            f".grad and no parameter gets a gradient.{whence} Keep the loss tensor itself "
            "instead of rebuilding it with torch.tensor(..., requires_grad=True)."
        )
    return [
        make_finding(
            "GP115",
            message=text,
            locations=_locations(*_leaf_lines(leaf.made or leaf.line, cut, traced)),
            details={
                "leaf_line": leaf.made[1] if leaf.made else None,
                "cut": cut.op if cut is not None else None,
            },
        )
    ]


def _leaf_source(events: Events, leaf: recorded.LeafBackward) -> tuple[Cut | None, bool]:
    """Where the values of a rebuilt leaf left autograd, and whether that is known from
    the data flow: a cut its values came from, a cut on a line of the graph between the
    leaf and backward() (``loss = loss - logp.item() * r``); else the latest cut that
    lost values before it (a comparison or argmax first, then .item()), read off the
    lines that made the leaf."""
    before = [c for c in events.cuts.values() if c.order < leaf.order]
    own = sorted((events.cuts[i] for i in leaf.cuts if i in events.cuts), key=lambda c: c.order)
    if own:
        return ([c for c in own if left_as_data(c)] or own)[-1], True
    on_path = [c for c in before if left_as_data(c) and c.line in leaf.through]
    if on_path:
        return max(on_path, key=lambda c: c.order), True
    if leaf.through:  # only the data flow speaks for a graph that did run
        return None, False
    earlier = [c for c in before if c.kind in _LOSSY]
    if leaf.made is not None:  # the cuts whose line assigns a name the leaf is made from
        read = _names_at(leaf.made, store=False)
        earlier = [
            c for c in earlier if c.line is not None and read & _names_at(c.line, store=True)
        ] or earlier
    # an argmax or comparison that lost the graph explains more than the .item() after it
    earlier = [c for c in earlier if c.kind == "non_differentiable"] or earlier
    if earlier:
        return max(earlier, key=lambda c: c.order), False
    # nothing lossy: a .data or detach() since the previous backward (a forward that
    # returns outputs.data; Variable(loss, requires_grad=True) made the leaf unseen)
    last = max((b.order for b in events.backwards if b.order < leaf.order), default=-1)
    recent = [c for c in before if c.order > last and c.kind in ("data", "detach")]
    return (max(recent, key=lambda c: c.order), True) if recent else (None, False)


def _leaf_lines(
    leaf: SourceLine | None, cut: Cut | None, traced: bool = False
) -> tuple[tuple[SourceLine | None, LocationRole], ...]:
    """The line where a rebuilt leaf's values left autograd (issue 25, invariant 8) when
    the data flow leads there or they left as Python numbers or arrays (.item(), float(),
    .numpy(), torch.tensor of a list): the rebuilt tensor is only where that shows.
    Otherwise the rebuilt leaf's line is the one to change."""
    if cut is not None and (traced or left_as_data(cut)):
        return ((cut.line, "cause"), (leaf, "created"))
    return ((leaf, "cause"), (cut.line if cut else None, "created"))


def _band_aid(
    line: SourceLine | None, no_grad: SourceLine | None, switched: SourceLine | None
) -> Finding:
    """GP115 for a loss computed with gradients off whose requires_grad was then switched
    on so that backward() stops raising: nothing upstream trains."""
    return make_finding(
        "GP115",
        message=(
            f"backward() at {_where(line)} was called on a tensor whose values were "
            f"computed with gradients turned off (at {_where(no_grad)}); requires_grad = "
            f'True at {_where(switched)} silenced the error "does not require grad" by '
            "making it a new leaf, connected to nothing, so no parameter gets a gradient. "
            "Remove the no_grad (or @torch.no_grad()) around the training forward, and the "
            "requires_grad line with it."
        ),
        locations=_locations((no_grad, "cause"), (switched, "created"), (line, "read")),
        details={"band_aid_line": switched[1] if switched else None},
    )


def _grad_reads(events: Events) -> list[Finding]:
    found: list[Finding] = []
    seen: set[Any] = set()
    for read in events.grad_reads:
        if read.line in seen:
            continue
        seen.add(read.line)
        record = events.nodes.get(read.node) if read.node is not None else None
        made = record.line if record is not None else None
        op = read.node[0] if read.node else "an operation"
        if read.reparam is not None:
            found.append(_reparam_read(read, read.reparam, op))
            continue
        found.append(
            make_finding(
                "GP106",
                message=(
                    f".grad was read at {_where(read.line)} on a tensor of shape {read.shape} "
                    f"that is not a leaf: it was computed by {op} at {_where(made)}, so "
                    "autograd never fills its .grad. If you meant it to be a leaf, create it "
                    "with the right dtype/device directly (torch.tensor(..., dtype=..., "
                    "requires_grad=True)) or call .requires_grad_() after the conversion; "
                    "otherwise call retain_grad() before backward()."
                ),
                node=op,
                locations=_locations((made, "cause"), (read.line, "read")),
                details={"shape": list(read.shape)},
            )
        )
    return found


def _reparam_read(read: GradRead, reparam: Reparam, op: str) -> Finding:
    return make_finding(
        "GP106",
        message=(
            f".grad was read at {_where(read.line)} on `{reparam.tensor}` (shape "
            f"{read.shape}) of a module reparametrised by {reparam.how} at "
            f"{_where(reparam.line)}: since then `{reparam.tensor}` is recomputed from the "
            f"parameter `{reparam.name}` in every forward pass ({op}), so it is not a leaf "
            f"and its .grad stays None. Read `{reparam.name}.grad` instead"
            + (
                f", or call prune.remove(module, {reparam.tensor!r}) to make "
                f"`{reparam.tensor}` a plain parameter again."
                if reparam.how == "pruning"
                else ", or remove the parametrization (parametrize.remove_parametrizations)."
            )
        ),
        node=op,
        parameter=reparam.name,
        locations=_locations((read.line, "cause"), (reparam.line, "cause")),
        details={"shape": list(read.shape), "reparametrised_by": reparam.how},
    )


def _mixes(events: Events) -> list[Finding]:
    found: list[Finding] = []
    seen: set[Any] = set()
    if not any(b.error is None for b in events.backwards):
        return found
    for mix in events.mixes:
        if mix.line in seen or not backpropagated(events, mix.node, mix.order):
            continue
        seen.add(mix.line)
        cuts = sorted((events.cuts[i] for i in mix.cuts), key=lambda c: c.order)
        # A detach or a no_grad block asked for by name is a choice (straight-through
        # estimators, PPO's old log-probabilities); a comparison, argmax, .item() or numpy
        # round trip that loses the graph on the way is the bug this finding is about.
        named = [c for c in cuts if c.kind in _LOSSY]
        if not named:
            continue
        where = ", ".join(f"{c.op} at {_where(c.line)}" for c in named[:3])
        found.append(
            make_finding(
                "GP113",
                message=(
                    f"At {_where(mix.line)} a term that carries no gradient was combined "
                    f"({mix.op}) with a value that does: it was computed from {where}, which "
                    "cut the "
                    "graph, so this term changes the loss value but contributes nothing to "
                    "any gradient."
                ),
                locations=_locations(*((c.line, "cause") for c in named[:2]), (mix.line, "read")),
                details={"cut_ops": [c.op for c in named]},
            )
        )
    return found


_LOSSY = frozenset({"non_differentiable", "item", "numpy", "autograd_grad"})
_EXITS = frozenset({"item", "numpy"})  # cuts whose values left torch


def _routed(top: torch.nn.Module, called: set[int]) -> set[int]:
    """ids of modules never called that sit in a ModuleList/ModuleDict beside a called
    module of their own type: experts a router did not pick this time (mixture of experts,
    a head per task), not a mistake; only DistributedDataParallel minds them."""
    routed: set[int] = set()
    for container in top.modules():
        if not isinstance(container, (torch.nn.ModuleList, torch.nn.ModuleDict)):
            continue
        members = list(container.children())
        used = {type(m) for m in members if id(m) in called}
        for member in members:
            if id(member) not in called and type(member) in used:
                routed.update(id(m) for m in member.modules())
    return routed


def _unused(events: Events, modules: Iterable[torch.nn.Module]) -> list[Finding]:
    if not events.backwards or events.backwards[-1].error is not None:
        return []  # a failed backward stops half-way: missing grads prove nothing
    if all(key is None for key in events.backwards[-1].roots):
        return []  # backward() on a leaf reaches no parameter at all: GP115 says why
    if any(
        leaf.through and leaf.line == events.backwards[-1].line and _leaf_source(events, leaf)[0]
        for leaf in events.leaf_backwards
    ):
        return []  # nor does a loss computed from a rebuilt leaf only: GP115 names the cut
    found: list[Finding] = []
    modules = list(modules)
    called = {id(module) for module in modules}
    for top in _top_modules(modules):
        owners = {
            id(param): id(module)
            for module in top.modules()
            for param in module.parameters(recurse=False)
        }
        named = list(top.named_parameters())
        trainable = [(n, p) for n, p in named if p.requires_grad]
        if events.last_inputs is not None:  # backward(inputs=...): the rest on purpose
            trainable = [(n, p) for n, p in trainable if id(p) in events.last_inputs]
        idle_only: set[int] = set()
        if not any(p.grad is not None for _, p in trainable):
            # A model without any gradient is not judged (a frozen teacher, a target
            # network), unless an optimizer stepped it while others had gradients, or
            # stepped it right after a backward that reached none of it; the latter only
            # when a cut on the way is found (not a zero_grad() in between: GP110).
            stepped = events.starved | events.idle
            trainable = [(n, p) for n, p in trainable if id(p) in stepped - events.fed]
            idle_only = {id(p) for _, p in trainable} - events.starved
            if not trainable:
                continue
        ddp = hasattr(top, "module") and type(top).__name__ == "DistributedDataParallel"
        missing = [(n, p) for n, p in trainable if p.grad is None]
        if missing and not ddp:
            routed = _routed(top, called)
            missing = [(n, p) for n, p in missing if owners.get(id(p)) not in routed]
        by_cause: dict[Any, list[str]] = {}
        for name, param in missing:
            if ddp and name.startswith("module."):
                name = name[len("module.") :]
            cut = events.rewrapped.get(id(param))
            how = "rewrapped"
            if cut is None:
                cut = _cut_above(events, events.first_use.get(id(param)))
                how = "cut"
            if cut is None:
                cut = _leaf_cut(events, id(param))
            line = cut.line if cut is not None else events.parameter_lines.get(id(param))
            if cut is not None and cut.kind == "no_grad" and cut.context is not None:
                line = cut.context  # the `with torch.no_grad():` or decorator turned it off
            kind = (how, cut.op, cut.kind, left_as_data(cut)) if cut is not None else None
            if cut is None and id(param) in idle_only:
                continue
            if cut is None and owners.get(id(param)) in called:
                kind = ("ran", "", "", False)
            by_cause.setdefault((kind, line), []).append(name)
        for (kind, line), names in by_cause.items():
            if kind is not None and kind[0] == "cut" and kind[2] == "data":
                why = (
                    f"they were used only through .data at {_where(line)}, which is their "
                    "memory without their graph, so nothing flows back to them. Use the "
                    "parameter itself there (self.weight, not self.weight.data)."
                )
            elif kind is not None and kind[0] == "cut" and kind[3]:
                why = (
                    f"they were used, but what was computed from them left autograd at "
                    f"{_where(line)} by {kind[1]}() as data (a Python number, an array or a "
                    "tensor rebuilt from values), and the loss made from there has no graph "
                    "back to them. Keep "
                    "the tensors themselves (torch.stack/torch.cat for a list, no .item(), "
                    "float() or .numpy() in a loss)."
                )
            elif kind is not None and kind[0] == "cut":
                how = {
                    "detach": "",
                    "no_grad": " under torch.no_grad()",
                    "autograd_grad": " (autograd.grad without create_graph)",
                }.get(kind[2], " (not differentiable)")
                why = (
                    f"they were used, but the graph from them was cut at {_where(line)} by "
                    f"{kind[1]}(){how}, so nothing flows back to them."
                )
                if kind[1] == "detach_":
                    why += (
                        " detach_() detaches the tensor itself, in place, so every later use "
                        "of it is cut too; detach() gives a cut copy and leaves it alone."
                    )
            elif kind is not None and kind[0] == "ran":
                why = (
                    f"their module (made at {_where(line)}) ran, but no use of them reached "
                    "the loss with autograd on: look in its forward for .data, "
                    "torch.no_grad()/inference_mode, or a checkpoint(use_reentrant=True) "
                    "whose inputs need no grad."
                )
            elif kind is not None:
                why = (
                    f"the graph from them was cut at {_where(line)}, where a new nn.Parameter "
                    "was made from a computed tensor: the new parameter is a fresh leaf, so "
                    "nothing flows back to the parameters it was computed from."
                )
            else:
                why = (
                    "the loss does not depend on them: the module they belong to (made at "
                    f"{_where(line)}) was not used on the path to the loss"
                    + (
                        "; under DistributedDataParallel this also makes the next iteration "
                        "fail unless find_unused_parameters=True."
                        if ddp
                        else "."
                    )
                )
            found.append(
                make_finding(
                    "GP107",
                    message=(
                        f"{len(names)} parameter{'s' if len(names) != 1 else ''} got no "
                        f"gradient after backward(): {', '.join(names[:8])}"
                        + (" ..." if len(names) > 8 else "")
                        + f"; {why}"
                    ),
                    parameter=names[0],
                    module=type(top).__name__,
                    locations=_locations(
                        (line, "created" if kind is not None and kind[0] == "ran" else "cause")
                    ),
                    details={"parameters": names, "ddp": ddp},
                )
            )
    return found


def _cut_above(events: Events, start: NodeKey | None, limit: int = 20_000) -> Any:
    """The cut reached going up (towards the loss) from ``start``, the node that first used
    a parameter: the parameter fed a graph that was then detached. The first one where the
    values left autograd as data (``.item()``, ``.numpy()``, ``torch.tensor(list)``), else
    the first one: a sampled action or a comparison on the way is not where a loss was
    rebuilt."""
    if start is None:
        return None
    seen = {start}
    queue = [start]
    first = None
    for key in queue:
        ident = events.cut_inputs.get(key)
        if ident is not None:
            cut = events.cuts[ident]
            if left_as_data(cut):
                return cut
            first = first or cut
        record = events.nodes.get(key)
        if record is None:
            continue
        for parent in record.consumers:
            if parent not in seen and len(seen) < limit:
                seen.add(parent)
                queue.append(parent)
    return first


# torch.tensor / as_tensor / asarray of tensors that require grad copy their values
_REBUILDS = frozenset({"tensor", "as_tensor", "asarray"})


def left_as_data(cut: Cut) -> bool:
    """Whether a cut turned values into data: Python numbers or arrays (``.item()``,
    ``float()``, ``.tolist()``, ``.numpy()``) or a new tensor built from their values."""
    return cut.kind in _EXITS or (cut.kind == "non_differentiable" and cut.op in _REBUILDS)


def _leaf_cut(events: Events, ident: int) -> Any:
    """The latest cut a parameter fed directly before the last backward (``w.data``, a
    layer run under no_grad), or None."""
    last = events.backwards[-1].order if events.backwards else None
    for cut_id in reversed(events.leaf_cuts.get(ident, ())):
        cut = events.cuts[cut_id]
        if last is None or cut.order < last:
            return cut
    return None


_NONSCALAR = NONSCALAR_ERROR


_NO_GRAD_FN = NO_GRAD_FN_TEXT


def late_leaves(events: Events) -> list[Finding]:
    found: list[Finding] = []
    for turned, read, backward, built in events.late_leaves[:3]:
        pairs: list[tuple[SourceLine | None, LocationRole]] = [
            (turned, "cause"),
            (built, "created"),
            (read, "read"),
        ]
        found.append(
            make_finding(
                "GP136",
                message=(
                    f"requires_grad was turned on at {_where(turned)}, after the forward pass "
                    f"that starts at {_where(built)} had already used the tensor: autograd "
                    "records the graph as ops run, so the graph that backward() at "
                    f"{_where(backward)} went through does not contain it, and its .grad read "
                    f"at {_where(read)} is None. Set requires_grad before the forward: "
                    "x.requires_grad_() before using x, or create it with "
                    "requires_grad=True."
                ),
                locations=[loc for line, role in pairs if (loc := location(line, role))],
            )
        )
    return found


# findings that already say why this .grad is None
_EXPLAINED = frozenset({"GP106", "GP107", "GP136"})


def none_grad_used(
    events: Events, error: BaseException, findings: Sequence[Finding]
) -> list[Finding]:
    if not isinstance(error, (AttributeError, TypeError)) or "NoneType" not in error_text(error):
        return []
    failed = traceback_location(error.__traceback__)
    if failed is None:
        return []
    hit = next(
        (
            (read, seen)
            for read, seen in events.none_grad_reads.items()
            if read[1] == failed.line and _resolved(read[0]) == failed.file
        ),
        None,
    )
    if hit is None:
        return []
    read, (backwards, what, made, cut_id) = hit
    cut = events.cuts.get(cut_id) if cut_id is not None else None
    if backwards:
        if any(f.code in _EXPLAINED for f in findings):
            return []
        if cut is not None and cut.line is not None:
            why = (
                "backward() had run, but not through this tensor: the graph was cut from it "
                f"by {cut.op} at line {cut.line[1]}, so the loss computed from that result "
                "does not reach it. Compute from the tensor itself where you need its "
                "gradient."
            )
        else:
            why = (
                "backward() had run, but not through this tensor: the loss's graph does not "
                "contain it (it was not used, or a detach(), .data, torch.no_grad() or a "
                "non-differentiable op cut it off). gradprobe.leaf_report(gradprobe.trace("
                "loss), tensor) shows whether the loss reaches it."
            )
    else:
        cut = None
        why = (
            "no backward() had run yet, and .grad stays None until a backward reaches the "
            "tensor. Zeroing gradients by hand before the first backward is the usual "
            "cause: check `if p.grad is not None`, set `p.grad = None` instead, or zero "
            "after the update."
        )
    made_at = f" (made at line {made[1]})" if made else ""
    pairs: list[tuple[SourceLine | None, LocationRole]] = (
        [(cut.line, "cause"), (read, "read")] if cut is not None else [(read, "cause")]
    )
    pairs.append((made, "created"))
    return [
        make_finding(
            "GP137",
            message=(
                f"The script failed on the .grad of a {what}{made_at}, read at line "
                f"{read[1]}: it was None because {why}"
            ),
            locations=[loc for where, role in pairs if (loc := location(where, role))],
            details={"backward_calls_before": backwards},
        )
    ]


def _resolved(filename: str) -> str:
    return shown_file(filename)
