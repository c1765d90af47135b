"""Saved tensors asked the question backward would ask: has your version moved on since
you were saved? Torch answers in an error text (``... is at version 1; expected version 0
instead``), the only public record of the version at save time. :func:`graph_findings`
probes a traced graph this way without running backward; :func:`gradprobe.check` and the
saved-tensor checks build on it.
"""

from __future__ import annotations

import gc
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import torch

from gradprobe._compat import FREED_ERROR, VERSION_ERROR
from gradprobe._trace import live_nodes
from gradprobe.errors import error_text
from gradprobe.findings import Finding, make_finding
from gradprobe.graph import Graph, SavedTensor

__all__ = ["VersionError", "graph_findings", "parse_version_error"]

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


def graph_findings(
    graph: Graph, roots: list[torch.Tensor], table: Mapping[int, tuple[str, str]]
) -> list[Finding]:
    """What would make ``backward()`` from ``roots`` fail: roots without grad (GP104),
    saved tensors written since they were saved (GP101, GP109), freed graphs (GP103).
    ``graph`` is ``trace(*roots)``; ``table`` names tensors (``trace``'s name table)."""
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
            fns = live_nodes(roots, len(graph.nodes))
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
    return findings


# -- probing ----------------------------------------------------------------------------------


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
                if "detached in-place" not in error_text(error):
                    raise
                fn.saved_tensors  # noqa: B018
        else:
            # `_saved_<slot>` unpacks with the node as grad_fn; a raw `.unpack()` of a saved
            # output (sigmoid's `result`) fails with an unrelated error instead.
            getattr(fn, "_saved_" + saved.slot.partition("[")[0])
    except RuntimeError as error:
        text = error_text(error)
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


def _owner(tensor: Any, table: Mapping[int, tuple[str, str]]) -> tuple[Any, str | None, str | None]:
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
    table: Mapping[int, tuple[str, str]],
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
