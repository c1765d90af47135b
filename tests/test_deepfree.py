"""Deep graphs stay safe to free after trace() touched every node (see gradprobe._deepfree).

Freeing a chain of ~40k autograd nodes that Python has touched overflows the C stack, so
these tests run each scenario in a fresh interpreter and check it exits cleanly: a crash
shows up as a negative return code (-11 for SIGSEGV) instead of taking pytest down.

The keeper's hold rules are unit-tested on small random DAGs with a small ``BAND``.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gradprobe import _deepfree

STEPS = 100_000  # two nodes per step: a 200,001-node chain, five times the crash depth

PRELUDE = """
import faulthandler
import threading

faulthandler.enable()

import torch

import gradprobe
from gradprobe import _deepfree

torch.set_num_threads(1)


def chain(y, steps):
    for _ in range(steps):
        y = y * 1.0001 + 0.1
    return y


x = torch.randn(4, requires_grad=True)
"""


def run(body: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    code = PRELUDE + textwrap.dedent(body)
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, check=False
    )


def assert_clean_exit(result: subprocess.CompletedProcess[str], *lines: str) -> None:
    """Exit status 0, and stdout is exactly ``lines`` (the last one printed at the very end)."""
    assert result.returncode == 0, (
        f"exit status {result.returncode} (-11 is a segfault)\n"
        f"stdout:\n{result.stdout[-2000:]}\nstderr:\n{result.stderr[-4000:]}"
    )
    assert result.stdout.splitlines() == list(lines), result.stderr[-4000:]


# -- the hazard is real ------------------------------------------------------------------------


def test_control_plain_walk_then_free_segfaults() -> None:
    """Documents the crash the keeper exists for: shared/research/deep_free_segfault.py.

    A plain BFS over next_functions (no gradprobe) touches every node of a 60,001-node
    chain; freeing the chain then overflows the C stack. If this torch no longer crashes,
    the hazard is gone and the test skips.
    """
    result = run(
        """
        import collections

        def walk(root):
            seen = {root}
            queue = collections.deque([root])
            while queue:
                for nxt, _ in queue.popleft().next_functions:
                    if nxt is not None and nxt not in seen:
                        seen.add(nxt)
                        queue.append(nxt)
            return len(seen)

        y = chain(x, 30_000)
        print("walked", walk(y.grad_fn), flush=True)
        del x, y
        print("deleted ok", flush=True)
        """
    )
    assert result.stdout.splitlines()[0] == "walked 60001"
    if result.returncode == 0:
        pytest.skip(f"torch {_torch_version()} frees a touched 60k-node chain without crashing")
    assert result.returncode < 0, result.stderr[-2000:]  # killed by a signal (SIGSEGV)
    assert "deleted ok" not in result.stdout


def _torch_version() -> str:
    import torch

    return torch.__version__


# -- deep graphs traced by gradprobe -----------------------------------------------------------


def test_trace_then_drop_the_output() -> None:
    result = run(
        f"""
        y = chain(x, {STEPS})
        graph = gradprobe.trace(y)
        print("nodes", len(graph), "depth", graph.depth, flush=True)
        del y
        print("drained", _deepfree.drain(60), _deepfree.held_count(), flush=True)
        print("graph still readable", len(graph.nodes), graph.nodes[-1].name)
        """
    )
    assert_clean_exit(
        result,
        f"nodes {2 * STEPS + 1} depth {2 * STEPS + 1}",
        "drained True 0",
        f"graph still readable {2 * STEPS + 1} torch::autograd::AccumulateGrad",
    )


def test_trace_drop_the_output_then_exit_at_once() -> None:
    """The keeper's worker may be mid-sweep when the interpreter shuts down."""
    result = run(
        f"""
        y = chain(x, {STEPS})
        graph = gradprobe.trace(y)
        del y, x
        print("exiting", flush=True)
        """
    )
    assert_clean_exit(result, "exiting")


def test_keep_an_intermediate_drop_the_output_then_the_intermediate() -> None:
    result = run(
        f"""
        middle = chain(x, {STEPS // 2})
        y = chain(middle, {STEPS // 2})
        graph = gradprobe.trace(y)
        del y
        _deepfree.release_free()
        # The lower half must still be a working graph.
        middle.sum().backward()
        print("backward through the kept half", x.grad is not None, flush=True)
        del middle
        print("drained", _deepfree.drain(60), _deepfree.held_count(), flush=True)
        """
    )
    assert_clean_exit(result, "backward through the kept half True", "drained True 0")


def test_trace_an_intermediate_then_drop_everything() -> None:
    result = run(
        f"""
        middle = chain(x, {STEPS // 2})
        y = chain(middle, {STEPS // 2})
        graph = gradprobe.trace(middle)
        print("nodes", len(graph), flush=True)
        del middle
        _deepfree.release_free()
        del y
        print("drained", _deepfree.drain(60), _deepfree.held_count(), flush=True)
        """
    )
    assert_clean_exit(result, f"nodes {STEPS + 1}", "drained True 0")


def test_trace_backward_then_drop() -> None:
    result = run(
        f"""
        y = chain(x, {STEPS})
        graph = gradprobe.trace(y)
        y.sum().backward()
        print("grad", x.grad is not None, flush=True)
        del y
        print("drained", _deepfree.drain(60), _deepfree.held_count(), flush=True)
        """
    )
    assert_clean_exit(result, "grad True", "drained True 0")


def test_exit_with_the_graph_still_alive() -> None:
    result = run(
        f"""
        y = chain(x, {STEPS})
        graph = gradprobe.trace(y)
        again = gradprobe.trace(y)  # a second trace holds the same nodes again
        print("held", _deepfree.held_count() > 0, graph == again, flush=True)
        """
    )
    assert_clean_exit(result, "held True True")


def test_skip_connections_to_a_long_chain() -> None:
    """``loss = stack(h_t).sum()``: every h_t is two BFS steps from the root, yet the
    recurrence through them is a 120k-node path."""
    result = run(
        """
        h = torch.zeros(4)
        states = []
        for _ in range(60_000):
            h = h * 0.5 + x
            states.append(h)
        loss = torch.stack(states).sum()
        del h, states
        graph = gradprobe.trace(loss)
        print("nodes", len(graph), "depth", graph.depth, flush=True)
        del loss
        print("drained", _deepfree.drain(60), _deepfree.held_count(), flush=True)
        """
    )
    # sum, stack, 60k adds, 60k-1 muls (h_0 = 0 * 0.5 needs no grad), x's AccumulateGrad
    assert_clean_exit(result, "nodes 120002 depth 120002", "drained True 0")


def test_graph_built_by_two_threads() -> None:
    """Sequence numbers are per thread, so they do not decrease along this chain's edges."""
    result = run(
        f"""
        box = [chain(x, {STEPS // 2})]
        worker = threading.Thread(target=lambda: box.append(chain(box[0], {STEPS // 2})))
        worker.start()
        worker.join()
        y = box.pop()
        box.clear()
        graph = gradprobe.trace(y)
        seq = [node.sequence_nr for node in graph.nodes]
        rising = any(
            seq[e.src] is not None and seq[e.dst] is not None and seq[e.dst] >= seq[e.src]
            for e in graph.edges
        )
        print("nodes", len(graph), "rising edge", rising, flush=True)
        del y
        print("drained", _deepfree.drain(60), _deepfree.held_count(), flush=True)
        """
    )
    assert_clean_exit(result, f"nodes {2 * STEPS + 1} rising edge True", "drained True 0")


@pytest.mark.slow
def test_million_node_chain() -> None:
    result = run(
        """
        y = chain(x, 500_000)
        try:
            graph = gradprobe.trace(y)
        except RecursionError:
            print("RecursionError", flush=True)
            raise
        print("nodes", len(graph), "depth", graph.depth, flush=True)
        del y
        print("drained", _deepfree.drain(120), _deepfree.held_count(), flush=True)
        """,
        timeout=900,
    )
    assert "RecursionError" not in result.stdout
    assert_clean_exit(result, "nodes 1000001 depth 1000001", "drained True 0")


# -- hold rules on small DAGs ------------------------------------------------------------------

BAND = 3


@st.composite
def dags(draw: st.DrawFn, max_nodes: int = 12) -> list[list[int]]:
    """``children[i]``: a random DAG (repeated edges allowed, as in ``x * x``), with node
    numbers shuffled so they are not a topological order."""
    count = draw(st.integers(1, max_nodes))
    pairs = [(i, j) for i in range(count) for j in range(i + 1, count)]
    edges = draw(st.lists(st.sampled_from(pairs), max_size=3 * count)) if pairs else []
    label = draw(st.permutations(range(count)))
    children: list[list[int]] = [[] for _ in range(count)]
    for src, dst in edges:
        children[label[src]].append(label[dst])
    return children


def longest_from_roots(children: Sequence[Sequence[int]]) -> list[int]:
    """Per node, the edges on the longest path to it from a node without parents."""
    count = len(children)
    parents: list[list[int]] = [[] for _ in range(count)]
    for src, kids in enumerate(children):
        for dst in kids:
            parents[dst].append(src)
    depth: dict[int, int] = {}

    def resolve(node: int) -> int:  # tiny graphs: recursion is fine here
        if node not in depth:
            depth[node] = max((resolve(p) + 1 for p in parents[node]), default=0)
        return depth[node]

    return [resolve(node) for node in range(count)]


def unheld_paths(children: Sequence[Sequence[int]], held: set[int]) -> list[list[int]]:
    """Every maximal path made only of un-held nodes (brute force)."""
    paths: list[list[int]] = []
    for start in range(len(children)):
        if start in held:
            continue
        stack = [[start]]
        while stack:
            path = stack.pop()
            nexts = [c for c in children[path[-1]] if c not in held]
            if not nexts:
                paths.append(path)
            stack.extend([*path, c] for c in nexts)
    return paths


def assert_runs_bounded(children: Sequence[Sequence[int]], held: set[int]) -> None:
    """A free cascade walks a path of un-held nodes; it must stay within BAND nodes. A last
    node without children ends the cascade and is not counted (its free recurses no further)."""
    for path in unheld_paths(children, held):
        cascading = [node for node in path if children[node]]
        assert len(cascading) <= BAND, path
        assert len(path) <= BAND + 1, path


@given(dags())
def test_hold_points_bound_every_unheld_run(children: list[list[int]]) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_deepfree, "BAND", BAND)
        hold = _deepfree.hold_points(children)

    assert len(hold) == len(set(hold))
    assert all(children[node] for node in hold)  # holding a childless node stops nothing
    assert_runs_bounded(children, set(hold))

    depth = longest_from_roots(children)
    # Released in this order: shallowest first.
    assert [depth[node] for node in hold] == sorted(depth[node] for node in hold)
    if max(depth) < BAND:
        assert hold == []
    else:
        # The documented rule: a node with children is held when an edge enters it from
        # another band of BAND depths.
        entered_across = {
            dst
            for src, kids in enumerate(children)
            for dst in kids
            if children[dst] and depth[src] // BAND != depth[dst] // BAND
        }
        assert set(hold) == entered_across


def test_hold_points_on_a_chain() -> None:
    """A chain of 10 with BAND 3: hold where a new band starts (depths 3 and 6), and not
    the last node at depth 9, which has no children."""
    children = [[i + 1] for i in range(9)] + [[]]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_deepfree, "BAND", BAND)
        hold = _deepfree.hold_points(children)
        assert _deepfree.hold_points([[1], [2], []]) == []  # shorter than a band
    assert hold == [3, 6]
    assert_runs_bounded(children, set(hold))
    assert not _deepfree.hold_points(children)  # with the real BAND this chain is short


@st.composite
def numbered_dags(draw: st.DrawFn) -> tuple[list[list[int]], list[int]]:
    """A DAG plus sequence numbers that strictly decrease along every edge, as autograd
    assigns them in one thread; childless nodes may be AccumulateGrad (-1)."""
    children = draw(dags())
    count = len(children)
    depth = longest_from_roots(children)
    order = sorted(range(count), key=depth.__getitem__)  # parents before children
    gaps = draw(st.lists(st.integers(1, 3), min_size=count, max_size=count))
    sequence = [0] * count
    number = sum(gaps) + 1
    for node, gap in zip(order, gaps, strict=True):
        number -= gap
        sequence[node] = number
    for node in range(count):
        if not children[node] and draw(st.booleans()):
            sequence[node] = -1
    return children, sequence


@given(numbered_dags())
def test_hold_points_by_sequence_bound_every_unheld_run(
    case: tuple[list[list[int]], list[int]],
) -> None:
    children, sequence = case
    # What the walk collects: nodes (not AccumulateGrad) an edge enters from another band.
    crossings = [
        dst
        for src, kids in enumerate(children)
        for dst in kids
        if sequence[dst] >= 0 and sequence[dst] // BAND != sequence[src] // BAND
    ]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_deepfree, "BAND", BAND)
        hold = _deepfree.hold_points_by_sequence(sequence, crossings)

    assert len(hold) == len(set(hold))
    assert set(hold) <= set(crossings)
    assert [sequence[node] for node in hold] == sorted((sequence[n] for n in hold), reverse=True)
    assert_runs_bounded(children, set(hold))
