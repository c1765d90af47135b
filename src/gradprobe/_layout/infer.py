"""Which module each graph node belongs to, inferred from parameter names.

Parameter names say where a parameter lives (``layer1.0.conv1.weight`` belongs to
``layer1.0.conv1``). An op that uses a parameter directly, or through one view of it
(``TBackward0`` for ``Linear``), is an *anchor* of the parameter's module. Every other op
is placed by forward time: sequence numbers order ops the way the forward pass created
them, so an op that ran between two anchors belongs to their common module prefix. At the
seam between two sibling blocks (``layer1.0`` then ``layer1.1``) the ops in between are
split at the last *fan-out* (a value read by two or more ops: a residual block's output
feeds the next block's convolution and its skip connection); ops up to the fan-out close
the earlier block, ops after it open the next. Ops after the last anchor (usually the
loss) sit at the top level.
"""

from __future__ import annotations

from collections.abc import Sequence

from gradprobe.graph import Graph, Node

__all__ = ["NO_MODULE", "common", "infer_modules", "join", "parts"]

# Ops through which a module reaches its own parameter: ``Linear`` transposes its weight,
# autocast copies it to half precision, ``MultiheadAttention`` slices its packed in_proj.
_PARAM_VIEWS = frozenset(
    {
        "TBackward0",
        "ViewBackward0",
        "PermuteBackward0",
        "TransposeBackward0",
        "ExpandBackward0",
        "UnsqueezeBackward0",
        "SqueezeBackward0",
        "SqueezeBackward1",
        "ReshapeAliasBackward0",
        "UnsafeViewBackward0",
        "AliasBackward0",
        "SliceBackward0",
        "SelectBackward0",
        "SplitBackward0",
        "ToCopyBackward0",
    }
)

NO_MODULE: tuple[str, ...] = ()


# -- module paths ------------------------------------------------------------------------------


def parts(path: str) -> tuple[str, ...]:
    return tuple(path.split(".")) if path else NO_MODULE


def join(parts: Sequence[str]) -> str:
    return ".".join(parts)


def common(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return a[:n]


def _deeper(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
    return a if len(a) >= len(b) else b


def _owner(node: Node) -> tuple[str, ...] | None:
    """The module owning a parameter or buffer leaf, or None for other nodes."""
    leaf = node.leaf
    if leaf is None or leaf.name is None or leaf.kind not in ("parameter", "buffer"):
        return None
    return parts(leaf.name)[:-1]


# -- module inference --------------------------------------------------------------------------


def infer_modules(graph: Graph) -> tuple[str, ...] | None:
    """The module path of every node (``""`` for the top level), by node id.

    Returns None when no parameter or buffer in the graph has a name (trace without
    ``model=``), since then nothing can be placed.

    Example:
        >>> import torch, gradprobe
        >>> net = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.ReLU())
        >>> graph = gradprobe.trace(net(torch.ones(1, 2)).sum(), model=net)
        >>> [(node.label, module) for node, module in zip(graph, infer_modules(graph))]
        [('Sum', ''), ('Relu', ''), ('Addmm', '0'), ('0.bias', '0'), ('T', '0'), ('0.weight', '0')]
    """
    owners = [_owner(node) for node in graph.nodes]
    if all(owner is None for owner in owners):
        return None
    modules: list[tuple[str, ...] | None] = list(owners)
    anchored = _anchor(graph, owners, modules)
    containers = {o[:i] for o in owners if o is not None for i in range(len(o))}
    _place_by_time(graph, modules, anchored, containers)
    _place_rest(graph, modules)
    return tuple(join(module or NO_MODULE) for module in modules)


def _anchor(
    graph: Graph,
    owners: list[tuple[str, ...] | None],
    modules: list[tuple[str, ...] | None],
) -> list[bool]:
    """Give every op that uses a named parameter (directly or via one view) its module."""
    anchored = [False] * len(graph.nodes)
    for node in graph.nodes:
        if node.leaf is not None:
            continue
        found: tuple[str, ...] | None = None
        for edge in graph.children(node.id):
            owner = owners[edge.dst]
            if owner is None:
                owner = _viewed_owner(graph, edge.dst, owners)
                if owner is not None:
                    modules[edge.dst] = owner
                    anchored[edge.dst] = True
            if owner is not None:
                found = owner if found is None else common(found, owner)
        if found is not None:
            modules[node.id] = found
            anchored[node.id] = True
    return anchored


def _viewed_owner(
    graph: Graph, node_id: int, owners: list[tuple[str, ...] | None]
) -> tuple[str, ...] | None:
    node = graph.nodes[node_id]
    if node.name not in _PARAM_VIEWS:
        return None
    children = graph.children(node_id)
    if len(children) != 1:
        return None
    return owners[children[0].dst]


def _place_by_time(
    graph: Graph,
    modules: list[tuple[str, ...] | None],
    anchored: list[bool],
    containers: set[tuple[str, ...]],
) -> None:
    """Place free ops between the anchors that ran before and after them."""
    timeline = sorted(
        (node.sequence_nr, node.id)
        for node in graph.nodes
        if node.leaf is None and node.sequence_nr is not None
    )
    prev: int | None = None
    run: list[int] = []
    for _, node_id in timeline:
        if anchored[node_id]:
            _place_run(graph, modules, containers, prev, run, node_id)
            prev, run = node_id, []
        elif modules[node_id] is None:
            run.append(node_id)
    # After the last anchor: the loss and other top-level code.
    for node_id in run:
        modules[node_id] = NO_MODULE


def _place_run(
    graph: Graph,
    modules: list[tuple[str, ...] | None],
    containers: set[tuple[str, ...]],
    prev: int | None,
    run: list[int],
    nxt: int,
) -> None:
    if not run:
        return
    after = modules[nxt] or NO_MODULE
    before = NO_MODULE if prev is None else modules[prev] or NO_MODULE
    shared = common(before, after) if prev is not None else NO_MODULE
    # Ops around a leaf module (bn2, linear1) belong to the container that holds it; a
    # container with parameters of its own (attention's in_proj) may hold them itself.
    closing = _deeper(shared, before if before in containers else before[:-1])
    opening = _deeper(shared, after if after in containers else after[:-1])
    # run[:split] closes the earlier block: everything up to the last fan-out (a residual
    # block's output feeds the next block twice), and the rest opens the next block.
    split: int | None = 0 if prev is not None and _fans_out(graph, prev) else None
    for index, node_id in enumerate(run):
        if _fans_out(graph, node_id):
            split = index + 1
    if split is not None:
        for index, node_id in enumerate(run):
            modules[node_id] = closing if index < split else opening
        return
    # Nothing fans out: the run finishes the earlier module (an activation after a block,
    # attention's output reshape), except ops that also read something from outside it,
    # like a post-norm residual add; those go one level up, to the enclosing module.
    outer = _deeper(shared, closing[:-1])
    for node_id in run:
        inside = all(
            (module := modules[edge.dst]) is None or module[: len(closing)] == closing
            for edge in graph.children(node_id)
            if graph.nodes[edge.dst].leaf is None
        )
        modules[node_id] = closing if inside else outer


def _fans_out(graph: Graph, node_id: int) -> bool:
    first: int | None = None
    for edge in graph.parents(node_id):
        if first is None:
            first = edge.src
        elif edge.src != first:
            return True
    return False


def _place_rest(graph: Graph, modules: list[tuple[str, ...] | None]) -> None:
    """Nodes without a sequence number, and leaves that are not parameters."""
    for node in graph.nodes:
        if modules[node.id] is not None:
            continue
        if node.leaf is not None and node.leaf.kind == "input":
            modules[node.id] = NO_MODULE
            continue
        found: tuple[str, ...] | None = None
        for edge in graph.parents(node.id):
            module = modules[edge.src]
            if module is not None:
                found = module if found is None else common(found, module)
        modules[node.id] = found if found is not None else NO_MODULE
