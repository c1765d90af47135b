"""What a picture of a graph draws: clusters, nodes, boxes and edges, as plain data."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

__all__ = ["Box", "BoxKind", "Cluster", "Detail", "View", "ViewEdge", "node_key"]

Detail = Literal["auto", "full", "collapsed"]

BoxKind = Literal["module", "repeat", "run", "rest"]
"""``module``: one or more whole modules drawn as one box (``layer1.0 … layer1.2:
3 × Bottleneck``); ``repeat``: blocks with the same structure as one drawn in full
(``like``); ``run``: a chain of ops repeating a short pattern (``Mul → Add``); ``rest``:
the nodes a size-limited picture leaves out."""


def node_key(node_id: int) -> str:
    """The DOT id of a graph node: stable, derived from ``node.id`` only."""
    return f"n{node_id}"


@dataclass(frozen=True)
class Box:
    """Graph nodes drawn as one box: modules, a run of repeated blocks or ops, or the rest.

    ``first`` … ``last`` are the modules the box stands for (for a ``run``: the repeated
    op pattern, ``Mul → Add``); ``like`` is the block drawn in full that a ``repeat``
    matches; ``count`` is how many blocks (or pattern repetitions) the box stands for,
    ``nodes`` and ``params`` the graph nodes and parameter tensors inside it, ``size``
    their parameters' elements, ``type`` the first module's class when known.
    """

    key: str
    kind: BoxKind
    first: str
    last: str
    like: str | None
    count: int
    nodes: int
    params: int
    size: int = 0
    type: str | None = None


@dataclass(frozen=True)
class Cluster:
    """A container module: the nodes and boxes drawn directly in it, then sub-clusters."""

    module: str
    nodes: tuple[int, ...]
    boxes: tuple[Box, ...]
    children: tuple[Cluster, ...]


@dataclass(frozen=True)
class ViewEdge:
    """A drawn edge, in autograd's direction (``src`` lists ``dst`` in next_functions).

    ``count`` is how many graph edges it stands for (more than one between boxes).
    """

    src: str
    dst: str
    count: int


@dataclass(frozen=True)
class View:
    """What to draw: a tree of clusters (``top`` is the graph itself) and the edges.

    ``keys`` maps every graph node id to the key it is drawn under (its own ``n<id>``, the
    box hiding it, or the node it was folded into). ``modules`` is the inferred module
    per node (None without names). ``hidden`` counts the graph nodes not drawn as
    themselves; ``items`` the nodes and boxes drawn. ``folded`` maps a drawn node to the
    view/reshape/transpose nodes folded into it, in forward order. ``steps`` names what
    was done to fit the picture, in order (``"fold"``, ``"repeats"``, ``"dedup"``,
    ``"runs"``, ``"modules"``, ``"depth"``, ``"rest"``).
    """

    detail: Literal["full", "collapsed"]
    top: Cluster
    edges: tuple[ViewEdge, ...]
    keys: tuple[str, ...]
    modules: tuple[str, ...] | None
    hidden: int
    items: int
    folded: Mapping[int, tuple[int, ...]] = field(default_factory=dict)
    steps: tuple[str, ...] = ()
    depth: int | None = None
