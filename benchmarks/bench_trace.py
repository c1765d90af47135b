"""Tracing speed against baselines measured in the same run (1 thread, medians).

    python benchmarks/bench_trace.py [--repeat N] [--nodes N]

1. gradprobe.trace ÷ a bare iterative BFS over next_functions, 100k-node chain, with
   saved-tensor metadata (target ≤ 3.0). The BFS touches every node without gradprobe's
   deep-free keeper, so it runs in a thread with a 1 GiB stack, where freeing that
   graph cannot overflow.
2. torchviz.make_dot ÷ gradprobe.trace on a 10k-node chain, recursion limit raised
   (target ≥ 5). make_dot recurses, so it too runs on the big-stack thread.
3. Render times of the three large models, if benchmarks/bench_render.py is present.

Each round builds fresh graphs (a walk leaves wrappers on every node, which a second
walk would find already made). Rounds interleave baseline and candidate; the ratio is the
median over rounds of the per-round ratio.
"""

from __future__ import annotations

import argparse
import collections
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

import gradprobe

BIG_STACK = 1024 * 1024 * 1024


def chain(nodes: int) -> torch.Tensor:
    """A chain of ``nodes`` autograd nodes (Mul and Add alternate; Mul saves a scalar)."""
    x = torch.randn(8, requires_grad=True)
    y = x
    for _ in range(nodes // 2):
        y = y * 1.0001 + 0.1
    return y


def bfs(root: Any) -> int:
    """The baseline: the plainest correct walk over next_functions."""
    seen = {root}
    queue = collections.deque([root])
    while queue:
        fn = queue.popleft()
        for nxt, _ in fn.next_functions:
            if nxt is not None and nxt not in seen:
                seen.add(nxt)
                queue.append(nxt)
    return len(seen)


def on_big_stack(fn: Callable[[], float]) -> float:
    """Run ``fn`` (which builds, walks and frees a graph) on a thread with a 1 GiB stack."""
    result: list[float] = []
    previous = threading.stack_size(BIG_STACK)
    try:
        thread = threading.Thread(target=lambda: result.append(fn()))
        thread.start()
        thread.join()
    finally:
        threading.stack_size(previous)
    return result[0]


def time_bfs(nodes: int) -> float:
    def run() -> float:
        y = chain(nodes)
        start = time.perf_counter()
        bfs(y.grad_fn)
        elapsed = time.perf_counter() - start
        del y  # freed here, on the big stack
        return elapsed

    return on_big_stack(run)


def time_trace(nodes: int) -> float:
    y = chain(nodes)
    start = time.perf_counter()
    graph = gradprobe.trace(y)
    elapsed = time.perf_counter() - start
    assert len(graph) == nodes + 1
    return elapsed


def time_make_dot(nodes: int) -> float:
    from torchviz import make_dot

    def run() -> float:
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, 20 * nodes))
        try:
            y = chain(nodes)
            start = time.perf_counter()
            make_dot(y, show_attrs=False, show_saved=True)
            elapsed = time.perf_counter() - start
            del y
            return elapsed
        finally:
            sys.setrecursionlimit(limit)

    return on_big_stack(run)


def ratio(
    label: str,
    numerator: Callable[[], float],
    denominator: Callable[[], float],
    repeat: int,
    target: str,
) -> float:
    ratios, tops, bottoms = [], [], []
    for _ in range(repeat):
        top, bottom = numerator(), denominator()
        tops.append(top)
        bottoms.append(bottom)
        ratios.append(top / bottom)
    value = statistics.median(ratios)
    print(
        f"{label:48s} {value:6.2f}  (target {target}; medians {statistics.median(tops):.3f} s"
        f" / {statistics.median(bottoms):.3f} s over {repeat} rounds)"
    )
    return value


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--nodes", type=int, default=100_000)
    parser.add_argument("--torchviz-nodes", type=int, default=10_000)
    args = parser.parse_args()
    torch.set_num_threads(1)
    print(f"torch {torch.__version__}, gradprobe {gradprobe.__version__}, 1 thread")
    ok = True
    trace_ratio = ratio(
        f"trace ÷ bare BFS, {args.nodes:,}-node chain",
        lambda: time_trace(args.nodes),
        lambda: time_bfs(args.nodes),
        args.repeat,
        "≤ 3.0",
    )
    ok &= trace_ratio <= 3.0
    try:
        import torchviz  # noqa: F401
    except ImportError:
        print("torchviz not installed (pip install '.[bench]'): make_dot comparison skipped")
    else:
        viz_ratio = ratio(
            f"torchviz make_dot ÷ trace, {args.torchviz_nodes:,}-node chain",
            lambda: time_make_dot(args.torchviz_nodes),
            lambda: time_trace(args.torchviz_nodes),
            args.repeat,
            "≥ 5",
        )
        ok &= viz_ratio >= 5
    render = Path(__file__).with_name("bench_render.py")
    if render.exists():
        sys.path.insert(0, str(render.parent.parent))
        from benchmarks import bench_render

        bench_render.main([])
    print("targets met" if ok else "TARGET MISSED")
    gradprobe._deepfree.drain()
    return 0


if __name__ == "__main__":
    sys.exit(main())
