"""Tests for gradprobe.trace: the walk of grad_fn / next_functions into a plain Graph.

The core property compares trace() with an independent reference walk written here (a
depth-first search over the torch objects, by identity) on random graphs from
``strategies``; the rest pins down every kind of input, naming, saved tensors,
truncation, argument errors, and that a Graph keeps no tensor alive.
"""

from __future__ import annotations

import copy
import dataclasses
import gc
import json
import pickle
import time
import types
import weakref
from collections import Counter, deque
from collections.abc import Iterable
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import assume, given
from hypothesis import strategies as st
from torch import nn
from torch.utils import checkpoint

import gradprobe
from gradprobe import _deepfree
from gradprobe.errors import GradprobeError, GradprobeTypeError, GradprobeValueError
from gradprobe.graph import Graph, Leaf, Node, Root, SavedTensor, Truncation
from strategies import (
    OPS,
    STALE_OPS,
    Built,
    Program,
    Scale,
    SumAndProduct,
    build,
    programs,
    random_graphs,
)

ACCUMULATE_GRAD = "torch::autograd::AccumulateGrad"


# -- the reference walk ------------------------------------------------------------------------


def root_node(tensor: torch.Tensor) -> Any:
    """The autograd node a tensor enters the graph at, or None."""
    if tensor.grad_fn is not None:
        return tensor.grad_fn
    if tensor.requires_grad:
        return torch.autograd.graph.get_gradient_edge(tensor).node
    return None


@dataclasses.dataclass
class Reference:
    """Nodes keyed by ``id()`` (the dict keeps them alive, so ids stay unique) and edges."""

    nodes: dict[int, Any]
    edges: set[tuple[int, int, int, int]]


def reference_walk(tensors: Iterable[torch.Tensor]) -> Reference:
    """Every node reachable from ``tensors``, by an explicit-stack DFS (no recursion)."""
    nodes: dict[int, Any] = {}
    edges: set[tuple[int, int, int, int]] = set()
    stack = [fn for fn in map(root_node, tensors) if fn is not None]
    while stack:
        fn = stack.pop()
        if id(fn) in nodes:
            continue
        nodes[id(fn)] = fn
        for slot, (nxt, input_nr) in enumerate(fn.next_functions):
            if nxt is None:
                continue
            edges.add((id(fn), id(nxt), slot, int(input_nr)))
            if id(nxt) not in nodes:
                stack.append(nxt)
    return Reference(nodes, edges)


def bfs_ids(tensors: Iterable[torch.Tensor]) -> dict[int, int]:
    """``id(node) -> position`` in breadth-first discovery order: roots in the order given
    (first occurrence), then ``next_functions`` in slot order."""
    ids: dict[int, int] = {}
    keep: list[Any] = []  # keeps every node alive so no id() is reused during the walk
    queue: deque[Any] = deque()
    for fn in map(root_node, tensors):
        if fn is not None and id(fn) not in ids:
            ids[id(fn)] = len(ids)
            keep.append(fn)
            queue.append(fn)
    while queue:
        for nxt, _ in queue.popleft().next_functions:
            if nxt is not None and id(nxt) not in ids:
                ids[id(nxt)] = len(ids)
                keep.append(nxt)
                queue.append(nxt)
    return ids


def longest_path_in_nodes(count: int, edges: Iterable[tuple[int, int]]) -> int:
    """Nodes on the longest path of a DAG with nodes ``0..count-1`` (memoised, iterative)."""
    children: list[list[int]] = [[] for _ in range(count)]
    for src, dst in edges:
        children[src].append(dst)
    longest: dict[int, int] = {}
    for start in range(count):
        stack = [(start, False)]
        while stack:
            node, expanded = stack.pop()
            if node in longest:
                continue
            if expanded:
                longest[node] = 1 + max((longest[c] for c in children[node]), default=0)
            else:
                stack.append((node, True))
                stack.extend((c, False) for c in children[node] if c not in longest)
    return max(longest.values(), default=0)


def graph_bfs_order(graph: Graph) -> list[int]:
    """Breadth-first order over the Graph's own edges (slot order), from its root ids."""
    order: list[int] = []
    seen: set[int] = set()
    for root in graph.roots:
        if root.node is not None and root.node not in seen:
            seen.add(root.node)
            order.append(root.node)
    position = 0
    while position < len(order):
        for edge in sorted(graph.children(order[position]), key=lambda e: e.slot):
            if edge.dst not in seen:
                seen.add(edge.dst)
                order.append(edge.dst)
        position += 1
    return order


def edge_tuples(graph: Graph) -> set[tuple[int, int, int, int]]:
    return {(e.src, e.dst, e.slot, e.input_nr) for e in graph.edges}


def without_sequence_nr(graph: Graph) -> Graph:
    """The graph with every node's sequence_nr cleared (a global per-thread counter)."""
    nodes = tuple(dataclasses.replace(node, sequence_nr=None) for node in graph.nodes)
    return dataclasses.replace(graph, nodes=nodes)


def forward_name(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


# -- the reference property --------------------------------------------------------------------


def check_against_reference(graph: Graph, outputs: list[torch.Tensor]) -> None:
    ref = reference_walk(outputs)
    assert len(graph) == len(ref.nodes)
    assert Counter(node.name for node in graph.nodes) == Counter(
        fn.name() for fn in ref.nodes.values()
    )
    assert [node.id for node in graph.nodes] == list(range(len(graph)))

    # Node identity -> id: ids are the breadth-first discovery order from the roots.
    ids = bfs_ids(outputs)
    assert set(ids) == set(ref.nodes)
    for key, fn in ref.nodes.items():
        node = graph.nodes[ids[key]]
        assert node.name == fn.name()
        if fn.name() == ACCUMULATE_GRAD:
            assert node.kind == "accumulate_grad"
            assert node.leaf is not None
            assert node.leaf.shape == tuple(fn.variable.shape)
            assert node.leaf.requires_grad
        else:
            assert node.leaf is None
            if isinstance(fn, torch.autograd.function.BackwardCFunction):
                assert node.kind == "custom_function"
                assert node.metadata["forward"] == forward_name(fn._forward_cls)
            else:
                assert node.kind == "op"
            assert node.sequence_nr == fn._sequence_nr()
    mapped = {(ids[s], ids[d], slot, nr) for s, d, slot, nr in ref.edges}
    assert edge_tuples(graph) == mapped
    assert len(graph.edges) == len(ref.edges)  # no duplicate edges

    # The ids really are a BFS order of the Graph itself, and children come in slot order.
    assert graph_bfs_order(graph) == list(range(len(graph)))
    for node in graph.nodes:
        slots = [edge.slot for edge in graph.children(node.id)]
        assert slots == sorted(slots)
        assert all(edge.src == node.id for edge in graph.children(node.id))
        assert all(edge.dst == node.id for edge in graph.parents(node.id))

    # Roots, in the order given, point at their own node.
    assert len(graph.roots) == len(outputs)
    for root, tensor in zip(graph.roots, outputs, strict=True):
        fn = root_node(tensor)
        assert root.node == (None if fn is None else ids[id(fn)])
        assert root.shape == tuple(tensor.shape)
        assert root.requires_grad == tensor.requires_grad
        assert (root.note is None) == (fn is not None and tensor.grad_fn is not None)

    assert graph.depth == longest_path_in_nodes(len(graph), ((s, d) for s, d, _, _ in mapped))
    # Nothing ran backward, so nothing can be freed.
    assert not graph.freed
    assert graph.truncated is None


@given(random_graphs())
def test_trace_agrees_with_a_reference_walk(built: Built) -> None:
    graph = gradprobe.trace(*built.args)
    check_against_reference(graph, built.outputs)


@given(programs())
def test_trace_is_deterministic(program: Program) -> None:
    built = build(program)
    first = gradprobe.trace(*built.args)
    assert gradprobe.trace(*built.args) == first
    # The same program built again gives the same graph, up to torch's global counter.
    again = gradprobe.trace(*build(program).args)
    assert without_sequence_nr(again) == without_sequence_nr(first)


@given(random_graphs(), st.data())
def test_max_nodes_keeps_a_breadth_first_prefix(built: Built, data: st.DataObject) -> None:
    full = gradprobe.trace(*built.args)
    limit = data.draw(st.integers(1, len(full) + 2), label="max_nodes")
    cut = gradprobe.trace(*built.args, max_nodes=limit)

    kept = min(limit, len(full))
    assert len(cut) == kept <= limit
    assert cut.nodes == full.nodes[:kept]
    assert edge_tuples(cut) == {e for e in edge_tuples(full) if e[0] < kept and e[1] < kept}
    # Seen but not followed: roots and children of kept nodes that did not fit.
    unexplored = {root.node for root in full.roots if root.node is not None and root.node >= kept}
    unexplored |= {e.dst for e in full.edges if e.src < kept <= e.dst}
    if unexplored:
        assert cut.truncated == Truncation(max_nodes=limit, unexplored=len(unexplored))
        assert any(f"max_nodes={limit}" in note for note in cut.notes)
    else:
        assert cut.truncated is None
        assert cut == full
    for root, full_root in zip(cut.roots, full.roots, strict=True):
        if full_root.node is not None and full_root.node < kept:
            assert root.node == full_root.node
            assert root.note == full_root.note
        elif full_root.node is not None:  # cut off: the note says so, not "no grad"
            assert root.node is None
            assert root.note is not None
            assert f"max_nodes={limit}" in root.note
        else:
            assert root == full_root


@given(random_graphs(exclude=STALE_OPS))
def test_trace_after_backward_sees_the_same_graph_freed(built: Built) -> None:
    before = gradprobe.trace(*built.args)
    differentiable = [t for t in built.outputs if t.requires_grad]
    assume(differentiable)
    torch.stack([t.sum() for t in differentiable]).sum().backward()

    after = gradprobe.trace(*built.args)
    assert [n.name for n in after.nodes] == [n.name for n in before.nodes]
    assert after.edges == before.edges
    # backward() ran every node and released every saved tensor; nodes that saved nothing
    # (including nodes whose slots were all unneeded) have nothing to free.
    assert [n.freed for n in after.nodes] == [bool(n.saved) for n in before.nodes]
    assert all(n.saved == () for n in after.nodes)
    assert after.freed == any(n.saved for n in before.nodes)
    assert any("retain_graph" in note for note in after.notes) == after.freed
    for leaf_before, leaf_after in zip(before.leaves, after.leaves, strict=True):
        assert not leaf_before.has_grad
        assert leaf_after.has_grad


@pytest.mark.parametrize("op", sorted(OPS))
def test_strategy_ops_build_what_they_claim(op: str) -> None:
    """Each op of the strategy really produces the autograd structure it is there for."""
    arity, made = OPS[op]
    program = Program(
        # addcmul's point is a node whose saved slots are all unneeded: only `self` needs grad.
        requires_grad=(True, op != "addcmul", op != "addcmul"),
        steps=((op, (0, 1, 2)[:arity]),),
        outputs=tuple(range(3, 3 + made)),
        nesting=(0,) * made,
        # Summed, so a consumer reaches each output of a two-output node by its input_nr.
        sum_outputs=(op == "custom2",) * made,
    )
    built = build(program)
    ref = reference_walk(built.outputs)
    names = {fn.name() for fn in ref.nodes.values()}
    expected = {
        "mul": {"MulBackward0"},
        "add": {"AddBackward0"},
        "matmul": {"MmBackward0"},
        "scale": {"MulBackward0"},
        "view": {"ViewBackward0"},
        "transpose": {"TBackward0"},
        "slice_expand": {"SliceBackward0", "ExpandBackward0"},
        "unbind_stack": {"UnbindBackward0", "StackBackward0"},
        "inplace": {"CloneBackward0", "AddBackward0"},
        "inplace_view": {"torch::autograd::CopySlices", "AsStridedBackward0"},
        "inplace_saved": {"AddBackward0", "MulBackward0"},
        "detach": set(),
        "island": {ACCUMULATE_GRAD},
        "no_grad": set(),
        "custom": {"ScaleBackward"},
        "custom2": {"SumAndProductBackward"},
        "index": {"IndexBackward0"},
        "index_put": {"IndexPutBackward0"},
        "addcmul": {"AddcmulBackward0"},
        "packed": {"MulBackward0"},
    }[op]
    assert expected <= names
    if op in ("detach", "no_grad"):
        assert not ref.nodes
    if op == "island":
        assert built.outputs[0].is_leaf and built.outputs[0].requires_grad
    if op == "unbind_stack" or op == "custom2":
        assert {nr for _, _, _, nr in ref.edges} >= {0, 1}
    if op == "inplace_saved":
        assert built.outputs[0]._version == 1
    if op in ("index", "index_put"):
        (node,) = (fn for fn in ref.nodes.values() if fn.name() in expected)
        assert isinstance(node._raw_saved_indices, tuple)
    if op == "addcmul":
        (node,) = (fn for fn in ref.nodes.values() if fn.name() == "AddcmulBackward0")
        assert node._raw_saved_tensor1.data is None
        assert node._raw_saved_tensor2.data is None
    if op == "packed":
        (node,) = (fn for fn in ref.nodes.values() if fn.name() == "MulBackward0")
        assert isinstance(node._raw_saved_self.data, tuple)


# -- every kind of input -----------------------------------------------------------------------


def test_leaf_that_requires_grad_is_its_accumulate_grad() -> None:
    x = torch.ones(2, 3, requires_grad=True)
    graph = gradprobe.trace(x, names={"x": x})
    assert [node.name for node in graph.nodes] == [ACCUMULATE_GRAD]
    (root,) = graph.roots
    assert root.node == 0
    assert root.is_leaf
    assert root.name == "x"
    assert root.note is not None
    assert "leaf" in root.note
    assert graph.leaves == (
        Leaf(
            name="x",
            kind="input",
            shape=(2, 3),
            dtype="float32",
            device="cpu",
            requires_grad=True,
            is_leaf=True,
            retains_grad=False,
            has_grad=False,
        ),
    )


def test_tensor_that_does_not_require_grad_has_no_graph() -> None:
    graph = gradprobe.trace(torch.ones(3))
    assert len(graph) == 0
    assert graph.edges == ()
    (root,) = graph.roots
    assert root.node is None
    assert not root.requires_grad
    assert root.note is not None
    assert "does not require grad" in root.note
    assert root.note in graph.notes


def test_output_computed_under_no_grad_has_no_graph() -> None:
    x = torch.ones(3, requires_grad=True)
    with torch.no_grad():
        y = x * 2
    graph = gradprobe.trace(y)
    assert len(graph) == 0
    assert graph.roots[0].node is None
    assert "does not require grad" in (graph.roots[0].note or "")


def test_custom_function_node() -> None:
    x = torch.ones(2, 2, requires_grad=True)
    out = Scale.apply(x * 1.0)
    graph = gradprobe.trace(out)
    node = graph.nodes[0]
    assert node.name == "ScaleBackward"
    assert node.kind == "custom_function"
    assert node.metadata["forward"] == forward_name(Scale)
    assert node.metadata["forward"].endswith("Scale")
    assert [(s.slot, s.shape) for s in node.saved] == [("saved_tensors[0]", (2, 2))]
    assert [n.name for n in graph.nodes[1:]] == ["MulBackward0", ACCUMULATE_GRAD]


def test_multi_output_custom_function_edges_carry_input_nr() -> None:
    a = torch.ones(2, requires_grad=True)
    b = torch.ones(2, requires_grad=True)
    total, product = SumAndProduct.apply(a, b)
    graph = gradprobe.trace(product - total)
    (sub,) = graph.find("SubBackward0")
    custom = graph.find("SumAndProductBackward")
    assert len(custom) == 1
    into = [(e.slot, e.input_nr) for e in graph.children(sub.id) if e.dst == custom[0].id]
    assert into == [(0, 1), (1, 0)]
    assert custom[0].metadata["forward"] == forward_name(SumAndProduct)


def test_views_and_in_place_writes() -> None:
    x = torch.ones(3, 3, requires_grad=True)
    base = x * 1.0
    view = base[:1]
    view.mul_(2.0)
    graph = gradprobe.trace(base, view)
    names = [node.name for node in graph.nodes]
    assert graph.nodes[graph.roots[0].node].name == "torch::autograd::CopySlices"
    assert graph.nodes[graph.roots[1].node].name == "AsStridedBackward0"
    assert names.count(ACCUMULATE_GRAD) == 1
    check_against_reference(graph, [base, view])

    t = (x * 1.0).t()
    flat = t.reshape(9)  # copy: t() is not contiguous
    wide = x[0:1].expand(4, 3)
    graph = gradprobe.trace(flat, wide, x.view(9))
    names = {node.name for node in graph.nodes}
    assert {"UnsafeViewBackward0", "TBackward0", "ExpandBackward0", "SliceBackward0"} <= names
    assert "ViewBackward0" in names


def test_checkpoint_reentrant_is_one_opaque_node() -> None:
    layer = nn.Linear(3, 3)
    x = torch.ones(2, 3, requires_grad=True)
    out = checkpoint.checkpoint(lambda t: torch.tanh(layer(t)), x, use_reentrant=True)
    graph = gradprobe.trace(out, model=layer, names={"x": x})
    node = graph.nodes[0]
    assert node.name == "CheckpointFunctionBackward"
    assert node.kind == "checkpoint"
    assert node.metadata["forward"] == "torch.utils.checkpoint.CheckpointFunction"
    # The inner ops only exist during backward; the block's parameters are not inputs.
    assert {n.name for n in graph.nodes} == {"CheckpointFunctionBackward", ACCUMULATE_GRAD}
    assert [leaf.name for leaf in graph.leaves] == ["x"]


def test_checkpoint_non_reentrant_keeps_normal_nodes() -> None:
    layer = nn.Linear(3, 3)
    x = torch.ones(2, 3, requires_grad=True)
    calls: list[int] = []

    def block(t: torch.Tensor) -> torch.Tensor:
        calls.append(1)
        return torch.tanh(layer(t))

    out = checkpoint.checkpoint(block, x, use_reentrant=False)
    graph = gradprobe.trace(out, model=layer)
    names = [node.name for node in graph.nodes]
    assert names[:2] == ["TanhBackward0", "AddmmBackward0"]
    assert all(node.kind in ("op", "accumulate_grad") for node in graph.nodes)
    assert sorted(leaf.name for leaf in graph.parameters) == ["bias", "weight"]
    # Its saved tensors are placeholders packed by checkpoint's hooks.
    tanh = graph.nodes[0]
    assert [(s.slot, s.is_output) for s in tanh.saved] == [("result", True)]
    assert all(s.packed is not None for n in graph.nodes for s in n.saved)
    # Tracing did not unpack them (which would re-run the block), and backward still works.
    assert calls == [1]
    out.sum().backward()
    assert calls == [1, 1]
    assert layer.weight.grad is not None


class _Box:
    def __init__(self, tensor: torch.Tensor) -> None:
        self.tensor = tensor


def test_saved_tensors_packed_by_hooks() -> None:
    x = torch.ones(2, 3, requires_grad=True)
    unpacked: list[int] = []

    def unpack(box: _Box) -> torch.Tensor:
        unpacked.append(1)
        return box.tensor

    with torch.autograd.graph.saved_tensors_hooks(_Box, unpack):
        boxed = (x * x).sum()
    with torch.autograd.graph.save_on_cpu():
        on_cpu = (x * x).sum()

    graph = gradprobe.trace(boxed)
    (mul,) = graph.find("MulBackward0")
    assert [(s.slot, s.packed, s.shape, s.version_now) for s in mul.saved] == [
        ("other", "_Box", (), None),
        ("self", "_Box", (), None),
    ]
    assert not unpacked  # tracing never runs a user's unpack hook

    # save_on_cpu packs (device, tensor): the tensor inside is described.
    (mul,) = gradprobe.trace(on_cpu).find("MulBackward0")
    assert {(s.slot, s.packed, s.shape, s.dtype) for s in mul.saved} == {
        ("other", "tuple", (2, 3), "float32"),
        ("self", "tuple", (2, 3), "float32"),
    }

    boxed.backward()
    assert unpacked == [1, 1]
    after = gradprobe.trace(boxed)
    assert after.find("MulBackward0")[0].freed
    assert after.freed


@pytest.mark.parametrize("index", ["list", "mask", "setitem"])
def test_advanced_indexing_saves_tensor_lists(index: str) -> None:
    x = torch.ones(3, 3, requires_grad=True)
    if index == "setitem":  # IndexPutBackward0 saves its `indices` list the same way
        out = x * 1.0
        out[torch.tensor([0, 2])] = 5.0
        expected = ("IndexPutBackward0", (2,), "int64")
    elif index == "list":
        out = x[torch.tensor([0, 2])]
        expected = ("IndexBackward0", (2,), "int64")
    else:
        out = x[x > 0]
        expected = ("IndexBackward0", (3, 3), "bool")
    graph = gradprobe.trace(out)
    check_against_reference(graph, [out])
    node = graph.nodes[0]
    indices = [s for s in node.saved if s.slot.startswith("indices")]
    assert [(node.name, s.slot, s.shape, s.dtype) for s in indices] == [
        (expected[0], "indices[0]", expected[1], expected[2])
    ]


@pytest.mark.parametrize("index", ["list", "setitem"])
def test_advanced_indexing_after_backward(index: str) -> None:
    x = torch.ones(3, 3, requires_grad=True)
    if index == "setitem":
        out = x * 1.0
        out[torch.tensor([0, 2])] = 5.0
    else:
        out = x[torch.tensor([0, 2])]
    out.sum().backward()
    graph = gradprobe.trace(out)
    assert graph.nodes[0].freed
    assert graph.freed


def test_graph_freed_by_backward() -> None:
    x = torch.ones(3, requires_grad=True)
    y = torch.ones(3, requires_grad=True)
    loss = (x * y).sum()
    loss.backward()
    graph = gradprobe.trace(loss)
    (mul,) = graph.find("MulBackward0")
    assert mul.freed
    assert mul.saved == ()
    assert graph.freed
    assert any("retain_graph" in note for note in graph.notes)
    assert all(leaf.has_grad for leaf in graph.leaves)
    assert "freed" in repr(graph)


def test_custom_function_freed_by_backward() -> None:
    x = torch.ones(3, requires_grad=True)
    out = Scale.apply(x * 1.0)
    out.sum().backward()
    graph = gradprobe.trace(out)
    assert graph.nodes[0].kind == "custom_function"
    assert graph.nodes[0].freed
    assert graph.nodes[0].saved == ()
    assert any("retain_graph" in note for note in graph.notes)


def test_retained_graph_is_not_freed() -> None:
    x = torch.ones(3, requires_grad=True)
    y = torch.ones(3, requires_grad=True)
    loss = (x * y).sum()
    before = gradprobe.trace(loss)
    loss.backward(retain_graph=True)
    graph = gradprobe.trace(loss)
    assert not graph.freed
    assert not any("retain_graph" in note for note in graph.notes)
    (mul,) = graph.find("MulBackward0")
    assert sorted(s.slot for s in mul.saved) == ["other", "self"]
    assert [n.saved for n in graph.nodes] == [n.saved for n in before.nodes]
    assert all(leaf.has_grad for leaf in graph.leaves)
    assert not any(leaf.has_grad for leaf in before.leaves)


def test_nodes_whose_slots_are_unneeded_are_freed_only_by_backward() -> None:
    """An unneeded slot reads as None, like a freed one: only backward() frees a node."""
    a = torch.ones(3, requires_grad=True)
    out = torch.addcmul(a, torch.ones(3), torch.ones(3))  # saves neither factor
    graph = gradprobe.trace(out)
    assert graph.nodes[0].name == "AddcmulBackward0"
    assert graph.nodes[0].saved == ()
    assert not graph.freed
    out.sum().backward()
    assert not gradprobe.trace(out).freed  # it had nothing to free: backward works again
    out.sum().backward()

    # x does not require grad, so x * w saves only `self` (x); the first slot in name
    # order, `other`, is unneeded. After backward the node is freed all the same.
    x = torch.ones(3)
    w = torch.ones(3, requires_grad=True)
    loss = (x * w).sum()
    (mul,) = gradprobe.trace(loss).find("MulBackward0")
    assert [s.slot for s in mul.saved] == ["self"]
    assert not mul.freed
    loss.backward()
    graph = gradprobe.trace(loss)
    (mul,) = graph.find("MulBackward0")
    assert mul.freed
    assert graph.freed
    assert any("retain_graph" in note for note in graph.notes)
    with pytest.raises(RuntimeError, match="second time"):
        loss.backward()


def test_multiple_roots_and_nested_arguments_are_flattened() -> None:
    x = torch.ones(2, requires_grad=True)
    a, b, c = x * 2, x + 1, torch.ones(2)
    flat = gradprobe.trace(a, b, c)
    nested = gradprobe.trace(a, [b, (c,)])
    assert nested == flat
    assert [root.name for root in flat.roots] == ["output[0]", "output[1]", "output[2]"]
    assert flat.roots[2].node is None
    assert gradprobe.trace((a, b, c)) == flat
    assert gradprobe.trace([a], [[b]], ((c,),)) == flat
    assert flat.leaves[0].shape == (2,)
    assert [n.name for n in flat.nodes].count(ACCUMULATE_GRAD) == 1
    # The same tensor twice: two roots, one node.
    twice = gradprobe.trace(a, a)
    assert len(twice) == len(gradprobe.trace(a))
    assert twice.roots[0].node == twice.roots[1].node == 0
    # A structseq (torch.return_types) is a tuple: values and indices are both roots.
    top = torch.max(x.unsqueeze(0) * 3, dim=1)
    graph = gradprobe.trace(top)
    assert len(graph.roots) == 2
    assert graph.roots[0].node is not None
    assert graph.roots[1].node is None


def test_model_and_names_name_leaves_and_roots() -> None:
    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = nn.Linear(3, 3)
            self.bn = nn.BatchNorm1d(3)
            self.register_buffer("scale", torch.full((3,), 2.0, requires_grad=True))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.bn(self.lin(x)) * self.scale

    net = Net()
    x = torch.ones(4, 3, requires_grad=True)
    loss = net(x).sum()
    graph = gradprobe.trace(loss, model=net, names={"x": x, "loss": loss})

    assert graph.roots[0].name == "loss"
    leaves = {leaf.name: leaf.kind for leaf in graph.leaves}
    expected = {name: "parameter" for name, _ in net.named_parameters()}
    assert leaves == {**expected, "scale": "buffer", "x": "input"}
    assert sorted(leaf.name for leaf in graph.parameters) == sorted(expected)
    # Buffers that do not require grad are named where they are saved.
    saved_names = {s.name for node in graph.nodes for s in node.saved}
    assert {"bn.running_mean", "bn.running_var", "x"} <= saved_names
    # find() looks up leaves by name too.
    (node,) = graph.find("lin.weight")
    assert node.leaf is not None
    assert node.leaf.shape == (3, 3)


def test_names_override_model_names_but_keep_the_kind() -> None:
    layer = nn.Linear(2, 2)
    out = layer(torch.ones(1, 2)).sum()
    graph = gradprobe.trace(out, model=layer, names={"W": layer.weight})
    assert {(leaf.name, leaf.kind) for leaf in graph.leaves} == {
        ("W", "parameter"),
        ("bias", "parameter"),
    }


def test_unnamed_leaves_have_no_name() -> None:
    x = torch.ones(2, requires_grad=True)
    graph = gradprobe.trace(x * 2)
    assert [(leaf.name, leaf.kind) for leaf in graph.leaves] == [(None, "tensor")]
    assert graph.roots[0].name == "output"


def test_tied_parameters_appear_once() -> None:
    emb = nn.Embedding(5, 3)
    head = nn.Linear(3, 5, bias=False)
    head.weight = emb.weight
    model = nn.Sequential(emb, head)
    out = model(torch.tensor([1, 2])).sum()
    graph = gradprobe.trace(out, model=model)
    assert [leaf.name for leaf in graph.parameters] == ["0.weight"]


def test_saved_tensors_slots_shapes_dtypes_and_versions() -> None:
    x = torch.ones(2, 3, requires_grad=True)
    y = torch.ones(3, dtype=torch.float64, requires_grad=True)
    graph = gradprobe.trace(x * y, names={"x": x, "y": y})
    (mul,) = graph.find("MulBackward0")
    assert {s.slot: (s.shape, s.dtype, s.device, s.name, s.version_now) for s in mul.saved} == {
        "self": ((2, 3), "float32", "cpu", "x", 0),
        "other": ((3,), "float64", "cpu", "y", 0),
    }
    assert not any(s.is_output for s in mul.saved)
    assert all(s.version_saved is None and s.stale is None for s in mul.saved)
    assert graph.saved_count == 2

    # An op that saves its result.
    graph = gradprobe.trace(torch.exp(x))
    (saved,) = graph.nodes[0].saved
    assert (saved.slot, saved.is_output, saved.shape) == ("result", True, (2, 3))

    # In-place on a saved non-leaf: the saved tensor's version moves on.
    a = x * 1.0
    b = a * a
    a.add_(1.0)
    graph = gradprobe.trace(b, names={"a": a})
    versions = {s.slot: (s.version_now, s.name) for s in graph.nodes[0].saved}
    assert versions == {"self": (a._version, "a"), "other": (a._version, "a")}
    assert a._version == 1


def test_inference_mode_tensors_do_not_crash() -> None:
    x = torch.ones(3, requires_grad=True)
    with torch.inference_mode():
        frozen = x * 2
    graph = gradprobe.trace(frozen)
    assert len(graph) == 0
    assert graph.roots[0].node is None
    assert graph.roots[0].note is not None

    mixed = x + frozen  # nothing saved, so autograd accepts the inference tensor
    graph = gradprobe.trace(mixed, frozen)
    assert [node.name for node in graph.nodes] == ["AddBackward0", ACCUMULATE_GRAD]

    # Tracing from inside inference_mode / no_grad reads the same graph.
    y = x * x
    outside = gradprobe.trace(y)
    with torch.inference_mode():
        assert gradprobe.trace(y) == outside
    with torch.no_grad():
        assert gradprobe.trace(y) == outside


def test_detach_island_is_cut() -> None:
    x = torch.ones(2, requires_grad=True)
    island = (x * 2).detach().requires_grad_()
    out = island * 3 + x.detach()
    graph = gradprobe.trace(out, names={"x": x, "island": island})
    assert [node.name for node in graph.nodes] == ["AddBackward0", "MulBackward0", ACCUMULATE_GRAD]
    assert [leaf.name for leaf in graph.leaves] == ["island"]


def test_nodes_are_complete_dataclasses() -> None:
    """Every field is set on the objects trace builds (equal to what __init__ makes)."""
    x = torch.ones(2, requires_grad=True)
    out = Scale.apply(torch.exp(x * x))
    graph = gradprobe.trace(out, names={"x": x})
    objects: list[Any] = [graph, *graph.nodes, *graph.roots]
    for node in graph.nodes:
        objects.extend(node.saved)
        if node.leaf is not None:
            objects.append(node.leaf)
    kinds = {type(obj) for obj in objects}
    assert {Graph, Node, Root, SavedTensor, Leaf} <= kinds
    for obj in objects:
        rebuilt = dataclasses.replace(obj)
        assert rebuilt == obj
        names = {field.name for field in dataclasses.fields(obj)}
        assert names <= set(vars(obj))
    json.dumps(graph.to_dict())  # plain builtins all the way down


@pytest.mark.parametrize("operation", ["pickle", "deepcopy", "hash"])
def test_graph_is_plain_data_that_pickles_and_hashes(operation: str) -> None:
    x = torch.ones(2, requires_grad=True)
    graph = gradprobe.trace(Scale.apply(x * 2))
    assert graph.nodes[0].metadata["forward"] == forward_name(Scale)  # metadata is in it
    if operation == "pickle":
        assert pickle.loads(pickle.dumps(graph)) == graph
    elif operation == "deepcopy":
        assert copy.deepcopy(graph) == graph
    else:
        assert hash(graph) == hash(dataclasses.replace(graph))  # equal objects, equal hashes
        assert hash(graph.nodes[0]) == hash(dataclasses.replace(graph.nodes[0]))


# -- max_nodes ---------------------------------------------------------------------------------


def chain(steps: int) -> tuple[torch.Tensor, torch.Tensor]:
    x = torch.ones(2, requires_grad=True)
    y = x
    for _ in range(steps):
        y = y * 1.5
    return x, y


def test_max_nodes_cut_is_reported() -> None:
    _, y = chain(10)
    full = gradprobe.trace(y)
    assert full.truncated is None
    graph = gradprobe.trace(y, max_nodes=4)
    assert len(graph) == 4
    assert graph.truncated == Truncation(max_nodes=4, unexplored=1)
    assert any("max_nodes=4" in note for note in graph.notes)
    assert "truncated at 4" in repr(graph)
    assert graph.nodes == full.nodes[:4]

    one = gradprobe.trace(y, max_nodes=1)
    assert len(one) == 1
    assert one.truncated is not None
    assert one.edges == ()

    exact = gradprobe.trace(y, max_nodes=len(full))
    assert exact == full


def test_max_nodes_keeps_slots_after_a_dropped_child() -> None:
    x = torch.ones(2, requires_grad=True)
    w = torch.ones(2, requires_grad=True)
    y = x * 2
    z = w * y  # next_functions: (w's AccumulateGrad, y's MulBackward0)
    full = gradprobe.trace(y, z)
    cut = gradprobe.trace(y, z, max_nodes=3)
    # w's AccumulateGrad (slot 0 of z's node) did not fit; the edge in slot 1 keeps slot 1.
    assert cut.truncated == Truncation(max_nodes=3, unexplored=1)
    assert (1, 0, 1, 0) in edge_tuples(full)
    assert edge_tuples(cut) == {(0, 2, 0, 0), (1, 0, 1, 0)}


def test_root_cut_by_max_nodes_is_not_called_gradless() -> None:
    x = torch.ones(2, requires_grad=True)
    graph = gradprobe.trace(x * 2, x * 3, max_nodes=1)
    cut = graph.roots[1]
    assert cut.requires_grad
    assert cut.node is None
    assert cut.note is not None
    assert "max_nodes=1" in cut.note
    assert "does not require grad" not in cut.note
    assert cut.note in graph.notes
    assert graph.truncated == Truncation(max_nodes=1, unexplored=2)


# -- argument errors ---------------------------------------------------------------------------


def _tensor() -> torch.Tensor:
    return torch.ones(2, requires_grad=True)


ERRORS = [
    pytest.param((), {}, GradprobeValueError, ["none"], id="no-args"),
    pytest.param(([], ()), {}, GradprobeValueError, ["empty"], id="empty-lists"),
    pytest.param((np.ones(2),), {}, GradprobeTypeError, ["ndarray", "array("], id="numpy"),
    pytest.param(([_tensor(), "oops"],), {}, GradprobeTypeError, ["'oops'", "str"], id="str"),
    pytest.param(({"a": _tensor()},), {}, GradprobeTypeError, ["dict"], id="dict"),
    pytest.param((_tensor(),), {"model": "resnet"}, GradprobeTypeError, ["'resnet'"], id="model"),
    pytest.param(
        (_tensor(),), {"names": [("x", _tensor())]}, GradprobeTypeError, ["list"], id="names-list"
    ),
    pytest.param(
        (_tensor(),), {"names": {"x": 3}}, GradprobeTypeError, ["'x'", "3"], id="names-value"
    ),
    pytest.param((_tensor(),), {"max_nodes": 0}, GradprobeValueError, ["max_nodes=0"], id="0"),
    pytest.param((_tensor(),), {"max_nodes": -1}, GradprobeValueError, ["max_nodes=-1"], id="-1"),
    pytest.param((_tensor(),), {"max_nodes": 1.5}, GradprobeTypeError, ["1.5"], id="float"),
    pytest.param((_tensor(),), {"max_nodes": True}, GradprobeTypeError, ["True"], id="bool"),
]


@pytest.mark.parametrize(("args", "kwargs", "error", "mentions"), ERRORS)
def test_bad_arguments(
    args: tuple[Any, ...], kwargs: dict[str, Any], error: type[Exception], mentions: list[str]
) -> None:
    with pytest.raises(error) as info:
        gradprobe.trace(*args, **kwargs)
    assert isinstance(info.value, GradprobeError)
    builtin = TypeError if error is GradprobeTypeError else ValueError
    assert isinstance(info.value, builtin)
    message = str(info.value)
    assert "trace" in message
    for text in mentions:
        assert text in message


def _contains_itself() -> list[Any]:
    cycle: list[Any] = [_tensor() * 2]
    cycle.append([cycle])
    return cycle


def test_a_list_that_contains_itself_is_refused_not_followed_forever() -> None:
    loss = _tensor() * 2
    with pytest.raises(GradprobeValueError, match="was given a list that contains itself"):
        gradprobe.trace([loss, _contains_itself()])
    shared = [loss]  # the same list twice is no cycle
    graph = gradprobe.trace([shared, shared, (shared,)])
    assert [root.name for root in graph.roots] == ["output[0]", "output[1]", "output[2]"]


# -- no tensor kept alive ----------------------------------------------------------------------


def _torch_objects(root: object) -> list[object]:
    """Objects of a torch type reachable from ``root`` (not through types and modules)."""
    found: list[object] = []
    seen: set[int] = set()
    stack = [root]
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if isinstance(obj, (type, types.ModuleType, types.FunctionType)):
            continue
        if isinstance(obj, (torch.Tensor, torch.autograd.graph.Node)) or type(
            obj
        ).__module__.startswith("torch"):
            found.append(obj)
            continue
        if dataclasses.is_dataclass(obj):
            stack.extend(getattr(obj, f.name) for f in dataclasses.fields(obj))
        stack.extend(gc.get_referents(obj))
    return found


def test_graph_holds_no_torch_objects() -> None:
    layer = nn.Linear(3, 3)
    x = torch.ones(2, 3, requires_grad=True)
    out = Scale.apply(torch.exp(layer(x)))
    base = out * 1.0
    base[:1].mul_(2.0)
    graph = gradprobe.trace(base, out, model=layer, names={"x": x})
    _ = graph.depth, graph.children(0), graph.parents(0), graph.leaves  # fill caches
    assert graph.saved_count > 0
    assert graph.leaves
    assert _torch_objects(graph) == []
    # The checker does find torch objects when they are there.
    assert _torch_objects({"sneaky": (out,)}) != []
    assert _torch_objects(out.grad_fn) != []


def _chain_with_saved(steps: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """A chain of ``y = y * w``: every intermediate is saved by the next node."""
    x = torch.ones(3, requires_grad=True)
    w = torch.full((3,), 1.0001, requires_grad=True)
    y = x
    middle = x
    for i in range(steps):
        y = y * w
        if i == steps // 2:
            middle = y
    return x, middle, y


@pytest.mark.parametrize("steps", [10, 3 * _deepfree.BAND])
def test_no_tensor_kept_alive(steps: int) -> None:
    # Deep graphs of earlier tests on this worker may still wait in a reference cycle for
    # the collector: count only what this test adds.
    gc.collect()
    _deepfree.drain(timeout=30)
    baseline = _deepfree.held_count()
    x, middle, y = _chain_with_saved(steps)
    refs = [weakref.ref(t) for t in (x, middle, y)]
    graph = gradprobe.trace(y, names={"x": x})
    assert len(graph) == steps + 2  # the muls and the two AccumulateGrads
    deep = graph.depth > _deepfree.BAND
    assert deep == (steps > _deepfree.BAND)
    # The saved intermediate is alive while its graph is: the check below can fail.
    del middle
    assert refs[1]() is not None
    del x, y
    if deep:
        deadline = time.monotonic() + 30
        while _deepfree.held_count() > baseline and time.monotonic() < deadline:
            _deepfree.release_free()
            time.sleep(0.01)
    assert [ref() for ref in refs] == [None, None, None]
    assert _deepfree.held_count() <= baseline
    assert len(graph) == steps + 2  # the Graph itself is still usable


# -- real models -------------------------------------------------------------------------------


def _benchmark_models() -> Any:
    return pytest.importorskip("benchmarks.models")


@pytest.mark.parametrize(
    ("builder", "kwargs", "input_kwargs"),
    [
        ("resnet18_like", {"num_classes": 10}, {"batch": 2, "size": 32}),
        ("resnet50_like", {"num_classes": 10}, {"batch": 2, "size": 32}),
        ("resnet_deep", {"blocks": 8}, {"batch": 2, "size": 32}),
        (
            "transformer_encoder",
            {"layers": 2, "d_model": 32, "nhead": 4},
            {"batch": 2, "size": 5, "d_model": 32},
        ),
        ("mlp", {"depth": 3, "width": 16}, {"batch": 2}),
    ],
)
def test_real_models(builder: str, kwargs: dict[str, int], input_kwargs: dict[str, int]) -> None:
    models = _benchmark_models()
    model = getattr(models, builder)(**kwargs)
    x = models.example_input(builder, **input_kwargs)

    first = gradprobe.trace(model(x).sum(), model=model, names={"x": x})
    second = gradprobe.trace(model(x).sum(), model=model, names={"x": x})

    expected = Counter(name for name, _ in model.named_parameters())
    assert Counter(leaf.name for leaf in first.parameters) == expected
    assert all(count == 1 for count in Counter(leaf.name for leaf in first.leaves).values())
    assert len(first.leaves) == len(expected)  # x does not require grad: no leaf for it
    assert len(first) == len(second)
    assert [n.name for n in first.nodes] == [n.name for n in second.nodes]
    assert first.edges == second.edges
    if builder.startswith("resnet"):
        saved = {s.name for node in first.nodes for s in node.saved if s.name}
        assert "bn1.running_mean" in saved
