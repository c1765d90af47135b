"""Preflight: will ``backward()`` through this graph fail? Ask before it raises.

:func:`check` traces the graph, then asks each saved tensor the question backward would
ask: PyTorch checks a saved tensor's version when it is unpacked, and the error text is the
only public source of the version at save time ("... is at version 1; expected version 0
instead"). No recorder is needed and nothing is computed: no backward runs.

Example:
    >>> import torch, gradprobe
    >>> from gradprobe.check import check
    >>> a = torch.ones(5, requires_grad=True)
    >>> b = a + 2
    >>> loss = (b * b).mean()
    >>> b[0] = 1000.0
    >>> report = check(loss)
    >>> report.ok
    False
    >>> [(f.code, f.node, f.details["slots"]) for f in report.findings]
    [('GP101', 'MulBackward0', ['other', 'self'])]
"""

from __future__ import annotations

import gc
import importlib
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch

from gradprobe._compat import FREED_ERROR, VERSION_ERROR
from gradprobe.findings import BackwardWouldFail, Finding, make_finding
from gradprobe.graph import Graph, SavedTensor
from gradprobe.trace import trace

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderResult

__all__ = ["CheckReport", "VersionError", "check", "parse_version_error"]

# `gradprobe.trace` the module is shadowed by the function in the package namespace.
_trace_module = importlib.import_module("gradprobe.trace")

_NO_SEQUENCE = 2**64 - 1


_MAX_IDS = 20  # node ids listed in a GP103 finding's details


@dataclass(frozen=True)
class VersionError:
    """The parts of PyTorch's "modified by an inplace operation" message.

    ``grad_fn`` is the tensor's *current* grad_fn as PyTorch prints it (``Sigmoid``,
    ``torch::autograd::CopySlices``, ``AsStrided``); None for a leaf.
    """

    tensor_type: str
    shape: tuple[int, ...]
    output: int | None
    grad_fn: str | None
    version_now: int
    version_saved: int

    @property
    def description(self) -> str:
        """``torch.FloatTensor [5]``, as PyTorch wrote it."""
        return f"{self.tensor_type} [{', '.join(str(size) for size in self.shape)}]"


def parse_version_error(text: str) -> VersionError | None:
    """Parse PyTorch's version-counter error text; None if ``text`` is not one.

    >>> parse_version_error(
    ...     "...: [torch.FloatTensor [5]], which is output 0 of Sigmoid, is at version 1; "
    ...     "expected version 0 instead. Hint: ..."
    ... ) is None
    True
    """
    match = VERSION_ERROR.search(text)
    if match is None:
        return None
    shape = tuple(int(size) for size in match["shape"].split(",") if size.strip())
    return VersionError(
        tensor_type=match["type"],
        shape=shape,
        output=int(match["output"]) if match["output"] is not None else None,
        grad_fn=match["grad_fn"],
        version_now=int(match["now"]),
        version_saved=int(match["saved"]),
    )


@dataclass(frozen=True)
class CheckReport:
    """What :func:`check` found. ``ok`` is True when backward() should not fail."""

    findings: tuple[Finding, ...]
    graph: Graph

    @property
    def ok(self) -> bool:
        """No finding: as far as gradprobe can tell, backward() will run."""
        return not self.findings

    def raise_if_failed(self) -> None:
        """Raise :class:`~gradprobe.findings.BackwardWouldFail` listing the findings, if any."""
        if self.findings:
            raise BackwardWouldFail(str(self), self.findings)

    def to_dict(self) -> dict[str, Any]:
        """``{"ok": bool, "findings": [finding.to_dict(), ...]}``."""
        return {"ok": self.ok, "findings": [finding.to_dict() for finding in self.findings]}

    def __str__(self) -> str:
        if self.ok:
            return f"gradprobe.check: ok, backward() should run ({len(self.graph)} nodes checked)"
        lines = [f"gradprobe.check: backward() would fail ({len(self.findings)} findings):"]
        lines.extend(f"- {finding}" for finding in self.findings)
        return "\n".join(lines)

    def __repr__(self) -> str:
        if self.ok:
            return f"<CheckReport ok, {len(self.graph)} nodes>"
        codes = ", ".join(f"{finding.code} {finding.node}" for finding in self.findings[:3])
        more = ", ..." if len(self.findings) > 3 else ""
        return f"<CheckReport {len(self.findings)} findings: {codes}{more}>"

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        from gradprobe.render.findings import findings_view

        yield findings_view(self.findings, ok_text=str(self))


def check(
    *tensors: torch.Tensor | Sequence[torch.Tensor],
    model: torch.nn.Module | None = None,
    names: Mapping[str, torch.Tensor] | None = None,
    lines: bool = True,
) -> CheckReport:
    """Find what would make ``backward()`` from ``tensors`` fail, without running it.

    Reports saved tensors that were modified in place after they were saved (GP101, or
    GP109 for a parameter, e.g. updated by ``optimizer.step()``), graphs already freed by
    an earlier backward (GP103), and roots that do not require grad (GP104).

    Args:
        tensors: what you would call backward on (usually the loss); lists are flattened.
        model: names parameters (GP109 says which one) and buffers.
        names: more names, ``{"x": x}``.
        lines: inside ``gradprobe.record()``, add the recorded source lines (the write
            that made a saved tensor stale is the ``cause``, where it was saved ``saved``).

    Raises:
        GradprobeTypeError, GradprobeValueError: as :func:`gradprobe.trace`.
    """
    graph = trace(*tensors, model=model, names=names)
    roots: list[torch.Tensor] = _trace_module._flatten(tensors)
    table: dict[int, tuple[str, str]] = _trace_module._name_table(model, names)
    findings: list[Finding] = [
        make_finding(
            "GP104",
            message=(
                f"{root.name} ({_shape(root.shape)}, {root.dtype}) does not require grad and "
                "has no grad_fn, so backward() on it raises 'element 0 of tensors does not "
                "require grad and does not have a grad_fn'."
            ),
            tensor=root.name,
        )
        for root in graph.roots
        if not root.requires_grad
    ]
    probe = [
        i
        for i, node in enumerate(graph.nodes)
        if node.freed or any(saved.packed is None for saved in node.saved)
    ]
    if probe:
        # trace() already held deep graphs at band boundaries (NOTE [deep free] in
        # _deepfree), and this walk touches only nodes trace wrapped: no new hazard.
        collecting = gc.isenabled()
        gc.disable()
        try:
            fns = _live_nodes(roots, len(graph.nodes))
        finally:
            if collecting:
                gc.enable()
        freed: list[int] = []
        for i in probe:
            node = graph.nodes[i]
            fn = fns[i] if i < len(fns) else None
            if fn is None or fn.name() != node.name:
                continue  # the graph changed between trace and probe (another thread)
            if node.freed:
                freed.append(i)
                continue
            found: list[VersionError] = []
            # One finding per stale tensor: `b * b` saves b as both `self` and `other`.
            stale: dict[tuple[int, VersionError], list[SavedTensor]] = {}
            for saved in node.saved:
                if saved.packed is not None:  # hooks replaced it; PyTorch checks nothing
                    continue
                problem = _probe(fn, saved, found)
                if problem is None:
                    continue
                if isinstance(problem, VersionError):
                    found.append(problem)
                    data = _raw(fn, saved.slot).data
                    stale.setdefault((id(data), problem), []).append(saved)
                elif i not in freed:
                    freed.append(i)
            for (_, problem), slots in stale.items():
                data = _raw(fn, slots[0].slot).data
                findings.append(_stale(graph, i, slots, problem, data, table))
        del fns
        if freed:
            findings.append(_freed(graph, freed))
    if lines:
        recording = sys.modules.get("gradprobe.record")
        active = recording.active_recording() if recording is not None else None
        if active is not None:
            from gradprobe.checks.saved_tensors import join_lines

            findings = join_lines(active.events, findings, graph)
    return CheckReport(findings=tuple(findings), graph=graph)


# -- probing ----------------------------------------------------------------------------------


def _live_nodes(roots: list[torch.Tensor], count: int) -> list[Any]:
    """The live autograd nodes in trace()'s order (roots in order, then BFS by slot)."""
    seen: set[Any] = set()
    fns: list[Any] = []
    for root in roots:
        fn = root.grad_fn
        if fn is None and root.requires_grad:
            fn = torch.autograd.graph.get_gradient_edge(root).node
        if fn is not None and fn not in seen and len(fns) < count:
            seen.add(fn)
            fns.append(fn)
    position = 0
    while position < len(fns):
        for nxt, _ in fns[position].next_functions:
            if nxt is not None and nxt not in seen and len(fns) < count:
                seen.add(nxt)
                fns.append(nxt)
        position += 1
    return fns


def _raw(fn: Any, slot: str) -> Any:
    """The ``torch._C._autograd.SavedTensor`` behind a slot name as trace() wrote it."""
    if "[" not in slot:
        return getattr(fn, "_raw_saved_" + slot)
    base, _, index = slot.partition("[")
    items = fn._raw_saved_tensors if base == "saved_tensors" else getattr(fn, "_raw_saved_" + base)
    return items[int(index.rstrip("]"))]


def _probe(fn: Any, saved: SavedTensor, found: list[VersionError]) -> VersionError | str | None:
    """Unpack one saved tensor the way backward would: the parsed version error, the
    freed-graph text, or None when it unpacks fine (or cannot be told apart).

    ``found`` holds the version errors already seen on this node's earlier slots.
    """
    try:
        if saved.slot.startswith("saved_tensors["):
            try:
                _raw(fn, saved.slot).unpack()
            except RuntimeError as error:
                # A saved *output* cannot be unpacked without its node ("...detached
                # in-place..."); ctx.saved_tensors unpacks every slot with the node, but
                # raises for the first stale one only, which may be an earlier slot.
                if "detached in-place" not in str(error):
                    raise
                fn.saved_tensors  # noqa: B018
        else:
            # `_saved_<slot>` unpacks with the node as grad_fn; a raw `.unpack()` of a saved
            # output (sigmoid's `result`) fails with an unrelated error instead.
            getattr(fn, "_saved_" + saved.slot.partition("[")[0])
    except RuntimeError as error:
        text = str(error)
        parsed = parse_version_error(text)
        if parsed is not None:
            if parsed.shape != saved.shape or (
                saved.slot.startswith("saved_tensors[") and parsed in found
            ):
                return None
            return parsed
        if FREED_ERROR in text:
            return FREED_ERROR
    return None


def _shape(shape: tuple[int, ...]) -> str:
    if not shape:
        return "shape ()"
    return f"shape {shape}"


def _owner(tensor: Any, table: dict[int, tuple[str, str]]) -> tuple[Any, str | None, str | None]:
    """The tensor or the base it views (``weight.t()`` is saved for ``addmm``), its name and
    kind from the name table."""
    for candidate in (tensor, getattr(tensor, "_base", None)):
        if candidate is None:
            continue
        named = table.get(id(candidate))
        if named is not None:
            return candidate, named[0], named[1]
        if isinstance(candidate, torch.nn.Parameter):
            return candidate, None, "parameter"
    base = getattr(tensor, "_base", None)
    return (base if base is not None and base.is_leaf else tensor), None, None


_WRITERS = {
    "torch::autograd::CopySlices": "an indexed or sliced assignment such as t[0] = ...",
    "AsStrided": "an in-place update of the tensor a view was taken from",
}


def _stale(
    graph: Graph,
    node_id: int,
    slots: list[SavedTensor],
    error: VersionError,
    tensor: Any,
    table: dict[int, tuple[str, str]],
) -> Finding:
    node = graph.nodes[node_id]
    saved = slots[0]
    names = [item.slot for item in slots]
    where = (
        f"slot {names[0]!r}"
        if len(names) == 1
        else "slots " + ", ".join(repr(n) for n in names[:-1]) + f" and {names[-1]!r}"
    )
    owner, name, kind = _owner(tensor, table)
    # PyTorch omits "which is output N of X" for leaves; raw.data of a saved output has no
    # grad_fn, so its is_leaf would mislead.
    is_leaf = error.grad_fn is None
    is_parameter = kind == "parameter"
    known = name or saved.name
    label = f"{known!r}" if known else f"a tensor ({saved.dtype}, {_shape(saved.shape)})"
    details = {
        "node_id": node_id,
        "slot": saved.slot,
        "slots": names,
        "shape": list(saved.shape),
        "dtype": saved.dtype,
        "version_saved": error.version_saved,
        "version_now": error.version_now,
        "is_leaf": is_leaf,
        "is_parameter": is_parameter,
        "is_output": saved.is_output,
        "grad_fn_now": error.grad_fn,
        "pytorch_tensor": error.description,
    }
    versions = (
        f"at version {error.version_saved}; it is now at version {error.version_now}, "
        f"so backward() will fail at {node.name}"
    )
    if is_parameter:
        return make_finding(
            "GP109",
            message=(
                f"{f'Parameter {name!r}' if name else 'A parameter'} "
                f"({_shape(tuple(owner.shape))}) was saved by "
                f"{node.name} ({where}) {versions}: it was updated in place, "
                "usually by optimizer.step(), after the forward pass that built this graph."
            ),
            tensor=known or error.description,
            node=node.name,
            parameter=name,
            details=details,
        )
    if saved.is_output:
        how = (
            f"{node.name} saved its own output{' ' if known else ', '}{label} ({where}), "
            "which was then "
            "modified in place, typically by an in-place activation (relu_, "
            "nn.ReLU(inplace=True)) or an update right after"
        )
    elif is_leaf:
        how = (
            f"{node.name} saved {label} ({where}), a tensor without grad_fn (an "
            "input or a leaf), which was then written in place: under torch.no_grad() or "
            "inference_mode, or directly since it does not require grad"
        )
    else:
        writer = _WRITERS.get(error.grad_fn or "", "an in-place operation")
        how = f"{node.name} saved {label} ({where}), which was then modified by {writer}"
    return make_finding(
        "GP101",
        message=f"{how}. It was saved {versions}.",
        tensor=known or error.description,
        node=node.name,
        details=details,
    )


def _freed(graph: Graph, node_ids: list[int]) -> Finding:
    first = graph.nodes[node_ids[0]]
    count = len(node_ids)
    return make_finding(
        "GP103",
        message=(
            f"backward() already ran through this graph and released the tensors saved by "
            f"{count} node{'s' if count != 1 else ''} (first: {first.name}); another "
            "backward() through it raises 'Trying to backward through the graph a second time'."
        ),
        node=first.name,
        details={"freed_nodes": count, "node_ids": node_ids[:_MAX_IDS]},
    )
