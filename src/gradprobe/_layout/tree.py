"""The planner behind :func:`gradprobe._layout.build_view`: modules, boxes, folds, runs.

A :class:`Planner` starts from the full picture (every node, one cluster per container
module) and each of its steps draws less, keeping the picture true:

- :meth:`~Planner.fold` folds view/reshape/transpose/expand nodes into the one op that
  reads them (its label then says ``via View → Transpose``);
- :meth:`~Planner.collapse_repeats` keeps the first of each run of consecutive sibling
  blocks with the same structure and boxes the others; with ``everywhere=True`` a block
  that has the structure of any block already drawn in full is boxed too;
- :meth:`~Planner.collapse_runs` draws a chain of ops repeating a short pattern once,
  then one box (a 200k-node chain of ``Mul → Add`` becomes a handful of boxes);
- :meth:`~Planner.box_depth` and :meth:`~Planner.box_until` box whole modules (at one
  depth, or deepest first until a budget is met); :meth:`~Planner.merge_boxes` draws
  consecutive boxes of the same structure as one (``layer1.0 … layer1.2: 3 × Bottleneck``);
- :meth:`~Planner.truncate` keeps the items nearest the outputs and boxes the rest.

A block's *structure* is its class name and, for every node inside it in forward order,
the op, its module relative to the block, its parameter's relative name and its edges
inside the block: names and shapes of the block itself do not count, so ``layer2.1`` has
the structure of ``layer1.1``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from gradprobe._layout.infer import NO_MODULE, join, parts
from gradprobe._layout.plan import Box, Cluster, View, ViewEdge, node_key
from gradprobe._layout.runs import MIN_REPEATS, repeats
from gradprobe.graph import Graph, Node

__all__ = ["Planner", "is_view_op"]

Path = tuple[str, ...]

# Ops that only re-describe their input's memory (no arithmetic): drawn folded into the
# op that reads them. Names without the ``Backward<N>`` suffix.
_VIEW_OPS = frozenset(
    {
        "Alias",
        "Expand",
        "Permute",
        "Reshape",
        "ReshapeAlias",
        "Squeeze",
        "T",
        "Transpose",
        "UnsafeView",
        "Unsqueeze",
        "View",
    }
)
# Containers whose class says nothing about what is inside them.
_GENERIC = frozenset({"Sequential", "ModuleList", "ModuleDict"})
_MIN_DEDUP = 3  # smaller blocks read better drawn than as "same as ..." boxes


def is_view_op(node: Node) -> bool:
    """Whether ``node`` is the backward of a view/reshape/transpose/expand op."""
    if node.leaf is not None or node.kind != "op":
        return False
    found = _VIEW_NAMES.get(node.name)
    if found is None:
        name = node.name.rstrip("0123456789")
        found = name.endswith("Backward") and name[: -len("Backward")] in _VIEW_OPS
        _VIEW_NAMES[node.name] = found
    return found


_VIEW_NAMES: dict[str, bool] = {}


def _index(name: str) -> int | None:
    return int(name) if name.isdigit() else None


def _under(path: Path, prefix: Path) -> bool:
    return path[: len(prefix)] == prefix


@dataclass
class _Boxed:
    paths: list[Path]
    like: Path | None


@dataclass
class _Run:
    container: Path
    pattern: tuple[str, ...]
    count: int  # repetitions hidden
    ids: list[int]
    leaves: list[int] = field(default_factory=list)  # what hangs off it, read only there


class Planner:
    """Container modules, the nodes drawn in each, and what replaces some of them."""

    def __init__(
        self, graph: Graph, modules: Sequence[str] | None, types: Mapping[str, str]
    ) -> None:
        self.graph = graph
        self.types = types
        count = len(graph.nodes)
        self.order = _forward_order(graph)
        self.rank = [0] * count
        for position, node_id in enumerate(self.order):
            self.rank[node_id] = position
        split = {m: parts(m) for m in set(modules or ("",))}
        self.paths: list[Path] = [split[m] for m in modules] if modules else [NO_MODULE] * count
        distinct = set(split.values())
        known = {p[:i] for p in distinct for i in range(1, len(p) + 1)}
        # A container has sub-modules of its own; a leaf module (conv1, bn2) is drawn
        # inside its container, its name in the node's label.
        self.containers: set[Path] = {p[:-1] for p in known} | {NO_MODULE}
        homes = {p: self._container_of(p) for p in distinct}
        self.home = [homes[p] for p in self.paths]
        self.direct: dict[Path, list[int]] = {}
        self.members: dict[Path, list[int]] = {}
        if len(distinct) == 1 and not known:  # no modules: one flat picture
            self.direct[NO_MODULE] = list(self.order)
            self.members[NO_MODULE] = list(self.order)
        for node_id in self.order if known else ():  # forward order, so every list is too
            self.direct.setdefault(self.home[node_id], []).append(node_id)
            path = self.paths[node_id]
            for depth in range(len(path) + 1):
                self.members.setdefault(path[:depth], []).append(node_id)
        kids: dict[Path, list[Path]] = {}
        for path in known:
            kids.setdefault(path[:-1], []).append(path)
        self.kids = {path: sorted(found, key=self._first_position) for path, found in kids.items()}
        self.roots = {root.node for root in graph.roots if root.node is not None}
        self.hidden = [False] * count
        self.hidden_count = 0
        self.boxes: dict[Path, _Boxed] = {}  # first module of a box -> the box
        self.boxed: dict[Path, Path] = {}  # module -> its box's first module
        self.into: dict[int, int] = {}  # folded node -> the node that reads it
        self.runs: list[_Run] = []
        self.rest: list[int] = []
        self.steps: list[str] = []
        self._signatures: dict[Path, tuple[object, ...]] = {}
        self._leaf_paths = [
            parts(node.leaf.name) if node.leaf is not None and node.leaf.name else None
            for node in graph.nodes
        ]
        self._positions: dict[Path, dict[int, int]] = {}

    def _container_of(self, path: Path) -> Path:
        while path and path not in self.containers:
            path = path[:-1]
        return path

    def _first_position(self, path: Path) -> tuple[int, int, str]:
        ids = self.members.get(path, ())
        index = _index(path[-1])
        return (
            self.rank[ids[0]] if ids else len(self.order),
            index if index is not None else -1,
            path[-1],
        )

    # -- bookkeeping ----------------------------------------------------------------------------

    def items(self) -> int:
        """Nodes and boxes drawn."""
        boxes = len(self.boxes) + len(self.runs) + (1 if self.rest else 0)
        return len(self.graph.nodes) - self.hidden_count + boxes

    def _hide(self, node_id: int) -> None:
        if not self.hidden[node_id]:
            self.hidden[node_id] = True
            self.hidden_count += 1

    def _show(self, node_id: int) -> None:
        if self.hidden[node_id]:
            self.hidden[node_id] = False
            self.hidden_count -= 1

    def _is_boxed(self, path: Path) -> bool:
        return any(path[:depth] in self.boxed for depth in range(1, len(path) + 1))

    def _box(self, paths: list[Path], like: Path | None, *, into: Path | None = None) -> None:
        """Draw ``paths`` (sibling modules, in order) as one box, or add them to the end
        of the box of ``into``; boxes and runs inside them are absorbed."""
        inside: set[int] = set()
        for path in paths:
            for first in [f for f in self.boxes if _under(f, path)]:
                for member in self.boxes.pop(first).paths:
                    del self.boxed[member]
            inside.update(self.members.get(path, ()))
        kept = []
        for run in self.runs:
            if inside.isdisjoint(run.ids):
                kept.append(run)
                continue
            for node_id in [*run.ids, *run.leaves]:  # a run cut by the box: show the rest
                if node_id not in inside and node_id not in self.into:
                    self._show(node_id)
        self.runs = kept
        for node_id in inside:
            self._hide(node_id)
        first = paths[0] if into is None else into
        if into is None:
            self.boxes[first] = _Boxed(list(paths), like)
        else:
            self.boxes[into].paths.extend(paths)
        for path in paths:
            self.boxed[path] = first

    def _contiguous(self, a: Path, b: Path) -> bool:
        """Whether block ``b`` starts right where block ``a`` ends, in forward order
        within their parent (nothing of the parent runs between them)."""
        parent = a[:-1]
        positions = self._positions.get(parent)
        if positions is None:
            ids = self.members.get(parent, [])
            positions = self._positions[parent] = {n: i for i, n in enumerate(ids)}
        first, second = self.members.get(a, []), self.members.get(b, [])
        if not first or not second:
            return False
        span = positions[second[-1]] - positions[first[0]] + 1
        return span == len(first) + len(second)

    def signature(self, path: Path) -> tuple[object, ...]:
        """A block's structure, comparable with any other block's (see the module doc)."""
        cached = self._signatures.get(path)
        if cached is not None:
            return cached
        ids = self.members.get(path, [])
        local = {node_id: i for i, node_id in enumerate(ids)}
        depth = len(path)
        nodes, paths, names = self.graph.nodes, self.paths, self._leaf_paths
        children = self.graph.children
        found: list[object] = [self.types.get(join(path))]
        for node_id in ids:
            inside = [(local[e.dst], e.slot) for e in children(node_id) if e.dst in local]
            name = names[node_id]
            found.append(
                (
                    nodes[node_id].name,
                    paths[node_id][depth:],
                    name[depth:] if name is not None else None,
                    tuple(inside),
                )
            )
        signature = self._signatures[path] = tuple(found)
        return signature

    # -- steps ----------------------------------------------------------------------------------

    def fold(self) -> None:
        """Fold every view-like node that has one reader into that reader."""
        graph = self.graph
        for node in graph.nodes:
            if node.id in self.roots or self.hidden[node.id] or not is_view_op(node):
                continue
            readers = {edge.src for edge in graph.parents(node.id)}
            if len(readers) == 1:
                self.into[node.id] = readers.pop()
                self._hide(node.id)
        self.steps.append("fold")

    def collapse_repeats(self, *, everywhere: bool = False) -> None:
        """Box blocks with the structure of a block drawn in full: the next ones in a run
        of siblings, or (``everywhere``) any later one."""
        seen: dict[tuple[object, ...], Path] = {}
        self._repeats(NO_MODULE, seen, everywhere)
        self.steps.append("dedup" if everywhere else "repeats")

    def _repeats(self, path: Path, seen: dict[tuple[object, ...], Path], everywhere: bool) -> None:
        local: dict[tuple[object, ...], Path] = {}
        previous: Path | None = None  # the last sibling, when boxed like something
        for kid in self.kids.get(path, ()):
            # Only containers: leaf modules (bn1, bn2) are ops with parameters, not blocks.
            if (
                kid in self.boxed
                or kid not in self.containers
                or len(self.members.get(kid, ())) < _MIN_DEDUP
            ):
                previous = kid if kid in self.boxed else None
                if not everywhere and kid not in self.boxed:
                    local.clear()  # something else ran in between: the run is over
                continue
            signature = self.signature(kid)
            table = seen if everywhere else local
            like = table.get(signature)
            if like is None:
                if not everywhere:
                    local.clear()
                table[signature] = kid
                previous = None
                if kid in self.containers:
                    self._repeats(kid, seen, everywhere)
                continue
            # Boxes of blocks that were "like" this one now join it, as one run.
            follow = [f for f, b in self.boxes.items() if b.like == kid]
            joined = [p for f in follow for p in self.boxes[f].paths]
            box = self.boxes.get(self.boxed[previous]) if previous is not None else None
            if box is not None and box.like == like and self._contiguous(box.paths[-1], kid):
                self._box([kid, *joined], like, into=box.paths[0])
            else:
                self._box([kid, *joined], like)
            previous = kid

    def collapse_runs(self) -> None:
        """Draw each chain of ops that repeats a short pattern once, then one box.

        A chain follows each op to its only reader (``h → Addmm → Add → Tanh → h``);
        where several chains meet, the longest goes on. What hangs off a chain (an RNN
        step's input and its projection) is compared as part of each op, and goes into
        the box with the ops that alone read it.
        """
        graph = self.graph
        nodes = graph.nodes
        count = len(nodes)
        drawn = self._drawn_as()
        # reader[u]: the one op drawn reading u's output (-1: none, -2: several).
        reader = [-1] * count
        inputs: list[list[int]] = [[] for _ in range(count)]
        for edge in graph.edges:
            src, dst = drawn[edge.src], drawn[edge.dst]
            if src < 0 or dst < 0 or src == dst:
                continue
            inputs[src].append(dst)
            if reader[dst] != src:
                reader[dst] = src if reader[dst] == -1 else -2
        home = self.home
        # Chains: each op to its only reader; at a meeting point the longest chain wins.
        length = [1] * count
        before = [-1] * count
        for node_id in self.order:  # forward order: every op after what it reads
            nxt = reader[node_id]
            if (
                nxt >= 0
                and nodes[node_id].leaf is None
                and home[nxt] == home[node_id]
                and length[node_id] + 1 > length[nxt]
            ):
                length[nxt] = length[node_id] + 1
                before[nxt] = node_id
        spines: set[int] = set()
        for end in self.order:
            nxt = reader[end]
            if length[end] < 2 * MIN_REPEATS or (nxt >= 0 and before[nxt] == end):
                continue  # too short, or not the end of its chain
            chain = [end]
            while before[chain[-1]] >= 0:
                chain.append(before[chain[-1]])
            chain.reverse()
            on_chain = set(chain)
            spines.update(chain)
            names = [
                (
                    nodes[n].name,
                    tuple(sorted(nodes[i].name for i in inputs[n] if i not in on_chain)),
                )
                for n in chain
            ]
            for found in repeats(names):
                first = found.start + found.period
                ids = chain[first : found.start + found.period * found.times]
                if len(ids) < 2:
                    continue  # a box for one node draws nothing less
                pattern = tuple(nodes[n].label for n in chain[found.start : first])
                self.runs.append(_Run(home[end], pattern, found.times - 1, ids))
                for node_id in ids:
                    self._hide(node_id)
        self._absorb(drawn, spines)
        self.steps.append("runs")

    def _absorb(self, drawn: list[int], spines: set[int]) -> None:
        """Nodes off the chains that only one run's hidden nodes read go into that run."""
        owner = {node_id: index for index, run in enumerate(self.runs) for node_id in run.ids}
        if not owner:
            return
        graph = self.graph
        for node_id in reversed(self.order):  # readers first
            if self.hidden[node_id] or node_id in self.roots or node_id in spines:
                continue
            runs = {owner.get(drawn[edge.src], -1) for edge in graph.parents(node_id)}
            if len(runs) == 1 and (index := runs.pop()) >= 0:
                self.runs[index].leaves.append(node_id)
                owner[node_id] = index
                self._hide(node_id)

    def box_depth(self, depth: int) -> None:
        """Box every module ``depth`` levels down (1: each top-level module)."""
        level = [p for p, ids in self.members.items() if len(p) == depth and ids]
        for path in sorted(level, key=self._first_position):
            if not self._is_boxed(path):
                self._box([path], None)
        self.steps.append("depth")

    def box_until(self, budget: int) -> None:
        """Box whole modules, deepest level first, biggest first, until at most
        ``budget`` items show."""
        while self.items() > budget:
            inside = self._open_sizes()
            candidates = [(size, path) for path, size in inside.items() if path and size > 1]
            if not candidates:
                break
            deepest = max(len(path) for _, path in candidates)
            level = sorted(
                (c for c in candidates if len(c[1]) == deepest),
                key=lambda c: (-c[0], self._first_position(c[1])),
            )
            for _, path in level:
                self._box([path], None)
                if self.items() <= budget:
                    break
        self.steps.append("modules")

    def _open_sizes(self) -> dict[Path, int]:
        """Items drawn inside each module that is not in a box."""
        sizes: dict[Path, int] = {}
        for node_id in range(len(self.graph.nodes)):
            if not self.hidden[node_id]:
                self._count(sizes, self.paths[node_id])
        for first in self.boxes:
            self._count(sizes, first[:-1])
        for run in self.runs:
            self._count(sizes, run.container)
        return {path: size for path, size in sizes.items() if not self._is_boxed(path)}

    @staticmethod
    def _count(sizes: dict[Path, int], path: Path) -> None:
        for depth in range(len(path) + 1):
            key = path[:depth]
            sizes[key] = sizes.get(key, 0) + 1

    def merge_boxes(self) -> None:
        """Draw consecutive sibling boxes of the same structure as one box."""
        for parent in sorted({first[:-1] for first in self.boxes}):
            group: list[Path] = []
            for kid in self.kids.get(parent, ()):
                box = self.boxes.get(kid)
                if box is None:
                    if kid not in self.boxed:  # drawn, or cut out: a gap between boxes
                        self._merge(group)
                        group = []
                    continue
                if group and not (
                    self._mergeable(group[0], kid)
                    and self._contiguous(self.boxes[group[-1]].paths[-1], kid)
                ):
                    self._merge(group)
                    group = []
                group.append(kid)
            self._merge(group)

    def _like(self, first: Path) -> Path | None:
        """The block drawn in full that a box points at, None when none is drawn."""
        like = self.boxes[first].like
        return like if like is not None and not self._is_boxed(like) else None

    def _mergeable(self, a: Path, b: Path) -> bool:
        """Whether boxes ``a`` and ``b`` can be drawn as one: both "like" the same block,
        or both plain module boxes of one class (their insides are not drawn, so a
        downsampling first block is still one of "3 × Bottleneck")."""
        like = self._like(a)
        if like is not None or self._like(b) is not None:
            return like == self._like(b)
        kind_a, kind_b = self.types.get(join(a)), self.types.get(join(b))
        if kind_a is not None and kind_b is not None and kind_a not in _GENERIC:
            return kind_a == kind_b
        return self.signature(a) == self.signature(b)

    def _merge(self, firsts: list[Path]) -> None:
        if len(firsts) < 2:
            return
        self.boxes[firsts[0]].like = self._like(firsts[0])
        paths = [p for first in firsts[1:] for p in self.boxes[first].paths]
        self._box(paths, None, into=firsts[0])

    def truncate(self, limit: int) -> None:
        """Keep at most ``limit`` items, those nearest the outputs (lowest node ids, the
        trace's breadth-first order), and draw all others as one box."""
        if self.items() <= limit:
            return
        entries: list[tuple[int, str, object]] = [
            (node_id, "node", node_id)
            for node_id in range(len(self.graph.nodes))
            if not self.hidden[node_id]
        ]
        for first, box in self.boxes.items():
            ids = [n for p in box.paths for n in self.members.get(p, ())]
            entries.append((min(ids), "box", first))
        for index, run in enumerate(self.runs):
            entries.append((min(run.ids), "run", index))
        entries.sort(key=lambda entry: (entry[0], entry[1]))
        dropped_runs: set[int] = set()
        for _, kind, what in entries[max(limit - 1, 0) :]:
            if kind == "node":
                assert isinstance(what, int)
                self.rest.append(what)
                self._hide(what)
            elif kind == "box":
                assert isinstance(what, tuple)
                box = self.boxes.pop(what)
                for path in box.paths:
                    del self.boxed[path]
                    self.rest.extend(self.members.get(path, ()))
            else:
                assert isinstance(what, int)
                dropped_runs.add(what)
                self.rest.extend([*self.runs[what].ids, *self.runs[what].leaves])
        self.runs = [run for index, run in enumerate(self.runs) if index not in dropped_runs]
        self.steps.append("rest")

    # -- output ---------------------------------------------------------------------------------

    def _drawn_as(self) -> list[int]:
        """For every node, the node it is drawn as now (itself, or the reader it was
        folded into), or -1 when it is inside a box."""
        drawn = [-1] * len(self.graph.nodes)
        for node_id in range(len(self.graph.nodes)):
            target = node_id
            while target in self.into:
                target = self.into[target]
            if not self.hidden[target]:
                drawn[node_id] = target
        return drawn

    def view(
        self,
        detail: Literal["full", "collapsed"],
        modules: Sequence[str] | None,
        depth: int | None = None,
    ) -> View:
        graph = self.graph
        keys = [node_key(node.id) for node in graph.nodes]
        drawn_boxes: dict[Path, Box] = {}
        run_boxes: dict[Path, list[tuple[int, Box]]] = {}
        numbering = 0

        def number() -> str:
            nonlocal numbering
            numbering += 1
            return f"b{numbering - 1}"

        # Boxes numbered in drawing order: the cluster tree, forward order inside each.
        for parent, kid_or_run in self._drawing_order():
            key = number()
            if isinstance(kid_or_run, _Run):
                run = kid_or_run
                box = self._run_box(key, run)
                run_boxes.setdefault(parent, []).append((self.rank[run.ids[0]], box))
                for node_id in [*run.ids, *run.leaves]:
                    keys[node_id] = key
                continue
            plan = self.boxes[kid_or_run]
            drawn_boxes[kid_or_run] = self._module_box(key, plan)
            for path in plan.paths:
                for node_id in self.members.get(path, ()):
                    keys[node_id] = key
        rest_box: Box | None = None
        if self.rest:
            rest_box = Box(number(), "rest", "", "", None, 1, len(self.rest), 0)
            for node_id in self.rest:
                keys[node_id] = rest_box.key
        folded: dict[int, list[int]] = {}
        for node_id in sorted(self.into, key=self.rank.__getitem__):
            if keys[node_id] != node_key(node_id):
                continue  # inside a box
            target = node_id
            while target in self.into:
                target = self.into[target]
            keys[node_id] = keys[target]
            if not self.hidden[target]:
                folded.setdefault(target, []).append(node_id)
        top = self._cluster(NO_MODULE, drawn_boxes, run_boxes)
        if rest_box is not None:
            top = dataclasses.replace(top, boxes=(*top.boxes, rest_box))
        edges: dict[tuple[str, str], int] = {}
        for edge in graph.edges:
            src, dst = keys[edge.src], keys[edge.dst]
            if src != dst:
                edges[(src, dst)] = edges.get((src, dst), 0) + 1
        hidden = sum(1 for node in graph.nodes if keys[node.id] != node_key(node.id))
        return View(
            detail=detail,
            top=top,
            edges=tuple(ViewEdge(src, dst, count) for (src, dst), count in edges.items()),
            keys=tuple(keys),
            modules=tuple(modules) if modules is not None else None,
            hidden=hidden,
            items=len(graph.nodes) - hidden + numbering,
            folded={target: tuple(ids) for target, ids in folded.items()},
            steps=tuple(self.steps),
            depth=depth,
        )

    def _drawing_order(self) -> Iterable[tuple[Path, Path | _Run]]:
        """Every box and run, cluster by cluster (depth first), in forward order."""
        runs: dict[Path, list[_Run]] = {}
        for run in self.runs:
            runs.setdefault(run.container, []).append(run)
        stack: list[Path] = [NO_MODULE]
        while stack:
            path = stack.pop()
            here: list[tuple[int, Path | _Run]] = [
                (self.rank[self.members[kid][0]], kid)
                for kid in self.kids.get(path, ())
                if kid in self.boxes
            ]
            here.extend((self.rank[run.ids[0]], run) for run in runs.get(path, ()))
            here.sort(key=lambda item: item[0])
            for _, item in here:
                yield path, item
            opened = [
                k for k in self.kids.get(path, ()) if k in self.containers and k not in self.boxed
            ]
            stack.extend(reversed(opened))

    def _run_box(self, key: str, run: _Run) -> Box:
        pattern = " → ".join(run.pattern)
        return Box(key, "run", pattern, pattern, None, run.count, len(run.ids) + len(run.leaves), 0)

    def _module_box(self, key: str, plan: _Boxed) -> Box:
        graph = self.graph
        ids = [n for p in plan.paths for n in self.members.get(p, ())]
        params = [
            leaf
            for n in ids
            if (leaf := graph.nodes[n].leaf) is not None and leaf.kind == "parameter"
        ]
        count = len(plan.paths)
        like = plan.like
        if like is not None and self._is_boxed(like):
            like = None  # the block it was like is itself in a box now: nothing to point at
        return Box(
            key=key,
            kind="module" if like is None else "repeat",
            first=join(plan.paths[0]),
            last=join(plan.paths[-1]),
            like=join(like) if like is not None else None,
            count=count,
            nodes=len(ids),
            params=len(params),
            size=sum(math.prod(leaf.shape) for leaf in params),
            type=self.types.get(join(plan.paths[0])),
        )

    def _cluster(
        self,
        path: Path,
        boxes: dict[Path, Box],
        runs: dict[Path, list[tuple[int, Box]]],
    ) -> Cluster:
        here = [
            (self.rank[self.members[kid][0]], boxes[kid])
            for kid in self.kids.get(path, ())
            if kid in boxes
        ]
        here.extend(runs.get(path, ()))
        here.sort(key=lambda item: item[0])
        children = []
        for kid in self.kids.get(path, ()):
            if kid in self.containers and kid not in self.boxed:
                child = self._cluster(kid, boxes, runs)
                if child.nodes or child.boxes or child.children:
                    children.append(child)
        return Cluster(
            module=join(path),
            nodes=tuple(n for n in self.direct.get(path, ()) if not self.hidden[n]),
            boxes=tuple(box for _, box in here),
            children=tuple(children),
        )


def _forward_order(graph: Graph) -> list[int]:
    """Node ids in forward order: ops by sequence number, each leaf just before its user."""
    ops = sorted(
        (node.sequence_nr, node.id)
        for node in graph.nodes
        if node.sequence_nr is not None and node.leaf is None
    )
    placed = [False] * len(graph.nodes)
    order: list[int] = []

    def place(ids: Iterable[int]) -> None:
        for node_id in ids:
            if placed[node_id]:
                continue
            placed[node_id] = True
            # Unnumbered inputs (leaves) go right before the first op that reads them.
            for edge in graph.children(node_id):
                if graph.nodes[edge.dst].sequence_nr is None and not placed[edge.dst]:
                    placed[edge.dst] = True
                    order.append(edge.dst)
            order.append(node_id)

    place(node_id for _, node_id in ops)
    place(range(len(graph.nodes)))
    return order
