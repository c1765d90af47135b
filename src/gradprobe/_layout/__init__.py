"""Which module each node belongs to, and what a readable picture of a graph shows.

Pure data in, pure data out: this package reads a :class:`~gradprobe.graph.Graph` (never
torch, never Graphviz) and returns a :class:`View`, the plan a renderer draws.
:mod:`~gradprobe._layout.infer` places every node in a module (from parameter names and
forward order), :mod:`~gradprobe._layout.tree` draws less of a graph step by step.

**Views.** ``detail="full"`` draws every node, in one cluster per container module.
``"collapsed"`` folds view/reshape/transpose/expand nodes into their reader, keeps one
block of each structure drawn in full and boxes the blocks like it, draws repeating op
chains once, then boxes whole modules, deepest first, until the picture has at most
:data:`COLLAPSED_BUDGET` boxes. ``"auto"`` (the default) takes those steps one at a time
and stops at the first picture of at most :data:`AUTO_BUDGET` boxes, so a small graph is
drawn in full. ``depth=N`` draws every module ``N`` levels down as one box (``1``: one
box per top-level module, with its parameter count). Boxes count nodes, module boxes,
outputs and the note.
"""

from __future__ import annotations

import gc

from gradprobe._layout.infer import infer_modules
from gradprobe._layout.plan import Box, BoxKind, Cluster, Detail, View, ViewEdge, node_key
from gradprobe._layout.tree import Planner, is_view_op
from gradprobe.graph import Graph

__all__ = [
    "AUTO_BUDGET",
    "COLLAPSED_BUDGET",
    "Box",
    "BoxKind",
    "Cluster",
    "Detail",
    "View",
    "ViewEdge",
    "build_view",
    "infer_modules",
    "is_view_op",
    "node_key",
]

AUTO_BUDGET = 100
"""``detail="auto"`` draws the most detailed picture with at most this many boxes."""

COLLAPSED_BUDGET = 300
"""``detail="collapsed"`` boxes whole modules until it draws at most this many boxes."""


def build_view(
    graph: Graph,
    detail: Detail = "auto",
    *,
    depth: int | None = None,
    budget: int | None = None,
    max_boxes: int | None = None,
) -> View:
    """Plan the picture of ``graph``: which clusters, which nodes, which boxes, which edges.

    Args:
        graph: the graph to draw.
        detail: ``"full"``, ``"collapsed"`` or ``"auto"`` (see the package doc).
        depth: draw every module this many levels down as one box (None: no limit).
        budget: the most boxes ``"auto"``/``"collapsed"`` aim for (default
            :data:`AUTO_BUDGET` / :data:`COLLAPSED_BUDGET`).
        max_boxes: ``"auto"`` only: if the picture still has more boxes than this, keep
            those nearest the outputs and draw the rest as one box.

    A graph without parameter names has no modules, so only folds and op runs apply.

    Example:
        >>> import torch, gradprobe
        >>> net = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.ReLU())
        >>> graph = gradprobe.trace(net(torch.ones(1, 2)).sum(), model=net)
        >>> build_view(graph).detail, build_view(graph, depth=1).top.boxes[0].first
        ('full', '0')
    """
    # Planning allocates a few small objects per node and makes no cycles; with a big
    # graph alive, the cyclic collector would re-scan all of it again and again (a
    # 200k-node graph: 7 s instead of 2).
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _plan(graph, detail, depth, budget, max_boxes)
    finally:
        if collecting:
            gc.enable()


def _plan(
    graph: Graph, detail: Detail, depth: int | None, budget: int | None, max_boxes: int | None
) -> View:
    modules = infer_modules(graph)
    planner = Planner(graph, modules, graph.module_types)
    drawn_anyway = len(graph.roots) + 1  # outputs, and a note

    def fits(target: int) -> bool:
        return planner.items() + drawn_anyway <= target

    if depth is not None:
        planner.box_depth(depth)
        if detail != "full":
            planner.merge_boxes()  # layer1.0 … layer1.2: 3 × Bottleneck
    if detail == "full":
        return planner.view("full", modules, depth)
    if detail == "collapsed":
        target = COLLAPSED_BUDGET if budget is None else budget
        planner.fold()
        planner.collapse_repeats()
        planner.collapse_repeats(everywhere=True)
        planner.collapse_runs()
        if depth is None:
            planner.box_until(target - drawn_anyway)
        planner.merge_boxes()
        return planner.view("collapsed", modules, depth)
    target = AUTO_BUDGET if budget is None else budget
    if fits(target):
        return planner.view("full", modules, depth)
    steps = [
        planner.fold,
        planner.collapse_repeats,
        lambda: planner.collapse_repeats(everywhere=True),
        planner.collapse_runs,
    ]
    if depth is None:
        steps.append(lambda: planner.box_until(target - drawn_anyway))
    for step in steps:
        step()
        if fits(target):
            break
    planner.merge_boxes()
    if max_boxes is not None and not fits(max_boxes):
        planner.truncate(max(max_boxes - drawn_anyway, 1))
    return planner.view("collapsed", modules, depth)
