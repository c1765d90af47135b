"""Time the interactive viewer: writing the page, and opening it in headless Chromium.

Run: ``python benchmarks/bench_html.py [--repeat 3] [--no-browser]``. For each graph:
``save_html`` in seconds and as a ratio to ``to_dot`` on the same graph (the target: the
page costs no more than about 3x the DOT text, which skips the data the viewer carries);
the page's size; and, when the system Chromium is there, the time until the page has
loaded and drawn its first view, and the time a search takes to open the modules or
chunks around a node deep inside and draw them (the target: under 1 s for 100,000
nodes, and the first view stays a few dozen boxes).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import torch

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import gradprobe
from benchmarks import models
from gradprobe.graph import Edge, Graph, Leaf, Node
from gradprobe.render import to_dot

_TESTS = Path(__file__).resolve().parent.parent / "tests"


def chain(length: int) -> Graph:
    """``length`` ops in a row over one parameter (built by hand: tracing is not timed)."""
    nodes = [
        Node(id=i, name="MulBackward0", kind="op", sequence_nr=length - i) for i in range(length)
    ]
    leaf = Leaf("deep.weight", "parameter", (3,), "float32", "cpu", True, True, False, False)
    nodes.append(
        Node(id=length, name="torch::autograd::AccumulateGrad", kind="accumulate_grad", leaf=leaf)
    )
    edges = [Edge(i, i + 1, 0, 0) for i in range(length)]
    return Graph(nodes=tuple(nodes), edges=tuple(edges), roots=())


def traced(model: torch.nn.Module, x: torch.Tensor) -> Graph:
    return gradprobe.trace(model(x).sum(), model=model)


def graphs() -> dict[str, Callable[[], Graph]]:
    return {
        "resnet50_like": lambda: traced(
            models.resnet50_like(), models.example_input("resnet50_like", batch=2, size=64)
        ),
        "transformer_encoder(24)": lambda: traced(
            models.transformer_encoder(24, d_model=64, nhead=4),
            models.example_input("transformer_encoder", batch=2, size=16, d_model=64),
        ),
        "chain(100000)": lambda: chain(100_000),
    }


def median_time(func: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


_DEEPEST = """(() => {
  const v = document.querySelector('.gp-viewer-host').gradprobeViewer;
  let deepest = 0, node = 0;
  for (let n = 0; n < v.N; n++) {
    let d = 0, g = v.data.nodes.group[n];
    while (g >= 0) { d++; g = v.data.groups.parent[g]; }
    if (d > deepest) { deepest = d; node = n; }
  }
  const start = performance.now();
  v.goTo(node);
  return [performance.now() - start, document.querySelectorAll('.gp-item').length];
})()"""


def in_browser(path: Path, repeat: int) -> tuple[float, int, float, int]:
    """(load s, boxes first drawn, search s, boxes after it), medians over ``repeat``."""
    sys.path.insert(0, str(_TESTS))
    from _browser import browser  # type: ignore[import-not-found]

    loads, searches = [], []
    first = after = 0
    with browser() as page:
        for _ in range(repeat):
            page.open(path)
            loads.append(
                page.run("performance.getEntriesByType('navigation')[0].loadEventEnd") / 1000
            )
            first = page.run("document.querySelectorAll('.gp-item').length")
            took, after = page.run(_DEEPEST)
            searches.append(took / 1000)
        if page.errors:
            raise RuntimeError(f"the page reported errors: {page.errors}")
    return statistics.median(loads), first, statistics.median(searches), after


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-browser", action="store_true")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    sys.path.insert(0, str(_TESTS))
    from _chromium import chromium  # type: ignore[import-not-found]

    use_browser = not args.no_browser and chromium() is not None
    print(f"median of {args.repeat}; browser: {chromium() if use_browser else 'not used'}")
    print(
        f"{'graph':<26}{'nodes':>8}{'to_dot s':>10}{'html s':>8}{'ratio':>7}{'MB':>6}"
        + (f"{'load s':>8}{'boxes':>7}{'search s':>10}{'boxes':>7}" if use_browser else "")
    )
    with tempfile.TemporaryDirectory() as tmp:
        for name, make in graphs().items():
            graph = make()
            dot = median_time(lambda g=graph: to_dot(g), args.repeat)
            path = Path(tmp) / "page.html"
            page = median_time(lambda g=graph, p=path: gradprobe.save_html(g, p), args.repeat)
            row = (
                f"{name:<26}{len(graph):>8}{dot:>10.3f}{page:>8.3f}{page / dot:>7.2f}"
                f"{path.stat().st_size / 1e6:>6.1f}"
            )
            if use_browser:
                load, first, search, after = in_browser(path, args.repeat)
                row += f"{load:>8.2f}{first:>7}{search:>10.3f}{after:>7}"
            print(row)


if __name__ == "__main__":
    main()
