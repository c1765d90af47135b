"""Time ``gradprobe.trace`` and ``to_svg`` on large models, per available Graphviz engine.

Run: ``python benchmarks/bench_render.py [--detail auto|full|collapsed] [--depth N]
[--repeat 3] [--chain 200000]``. Prints medians over ``--repeat`` runs, one thread
(``torch.set_num_threads(1)``), and how many boxes each picture draws (nodes, boxes,
outputs, note). The target is under 3 s for trace and for SVG, each, in the default
(auto) view, which draws at most 100 boxes for each model here.

``--chain N`` also draws an ``N``-node chain (the size guard): the default view, and
how long ``detail="full"`` takes to refuse (it must not start Graphviz).
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import gradprobe
from benchmarks import models
from gradprobe.errors import GraphvizNotFoundError, RenderError
from gradprobe.render import svg as render_svg
from gradprobe.render import to_dot

DRAWN = re.compile(r"^\s+(?:[nbr]\d+|notes) \[", re.MULTILINE)  # node, box, root, note

CASES: dict[str, tuple[Callable[[], torch.nn.Module], Callable[[], torch.Tensor]]] = {
    "resnet50_like": (
        models.resnet50_like,
        lambda: models.example_input("resnet50_like", batch=2, size=64),
    ),
    "resnet_deep(48)": (
        lambda: models.resnet_deep(48),
        lambda: models.example_input("resnet_deep", batch=2, size=32),
    ),
    "transformer_encoder(24)": (
        lambda: models.transformer_encoder(24, d_model=256, nhead=8),
        lambda: models.example_input("transformer_encoder", batch=8, size=64),
    ),
}


def engines() -> dict[str, str]:
    """Every engine found on this machine: name -> executable path."""
    found: dict[str, str] = {}
    system = render_svg._system_dot()
    if system is not None:
        found["dot"] = str(system)
    pure = render_svg._graphviz_pure()
    if pure is not None:
        found["graphviz-pure"] = str(pure)
    return found


def median_time(func: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--detail", default="auto", choices=["auto", "full", "collapsed"])
    parser.add_argument("--depth", type=int, default=None)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--chain", type=int, default=0, help="also an N-node chain")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    found = engines()
    if not found:
        raise GraphvizNotFoundError("no Graphviz engine: pip install graphviz-pure")
    view = {"detail": args.detail, "depth": args.depth}
    print(f"torch {torch.__version__}, {view}, median of {args.repeat}")
    print("engines: " + ", ".join(f"{name} ({path})" for name, path in found.items()))
    header = f"{'model':<26}{'nodes':>7}{'drawn':>7}{'trace s':>9}{'to_dot s':>10}"
    print(header + "".join(f"{name + ' svg s':>21}" for name in found))
    for name, (build, make_input) in CASES.items():
        model = build()
        out = model(make_input()).sum()
        graph = gradprobe.trace(out, model=model)
        trace_s = median_time(lambda: gradprobe.trace(out, model=model), args.repeat)  # noqa: B023
        dot_s = median_time(lambda: to_dot(graph, **view), args.repeat)  # noqa: B023
        text = to_dot(graph, **view)
        drawn = len(DRAWN.findall(text))
        row = f"{name:<26}{len(graph):>7}{drawn:>7}{trace_s:>9.3f}{dot_s:>10.3f}"
        for path in found.values():
            svg_s = median_time(
                lambda: render_svg.to_svg(graph, **view, engine=path),  # noqa: B023
                args.repeat,
            )
            row += f"{svg_s:>21.3f}"
        print(row, flush=True)
    if args.chain:
        chain(args.chain, next(iter(found.values())))


def chain(nodes: int, engine: str) -> None:
    """The size guard on an ``nodes``-node Mul/Add chain (no module names, one long run)."""
    x = torch.ones(8, requires_grad=True)
    y = x
    for _ in range(nodes // 2):
        y = y * 1.0001 + 0.1
    start = time.perf_counter()
    graph = gradprobe.trace(y.sum())
    trace_s = time.perf_counter() - start
    start = time.perf_counter()
    svg = render_svg.to_svg(graph, engine=engine)
    auto_s = time.perf_counter() - start
    start = time.perf_counter()
    try:
        render_svg.to_svg(graph, detail="full", engine=engine)
    except RenderError:
        refused = f"refused in {time.perf_counter() - start:.2f} s"
    else:
        refused = f"drawn in {time.perf_counter() - start:.2f} s"
    boxes = svg.count('class="node"')
    print(
        f"chain of {len(graph):,} nodes: trace {trace_s:.2f} s; default view {boxes} boxes "
        f"in {auto_s:.2f} s; detail='full' {refused}",
        flush=True,
    )


if __name__ == "__main__":
    main()
