"""What every check uses to name lines: a recorded ``(file, line, function)`` as a
finding's :class:`~gradprobe.Location`, or as "line N" in a message."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence

import torch

from gradprobe._recorder import Events, NodeKey, SourceLine
from gradprobe._source import line_location
from gradprobe.findings import Location, LocationRole

# -- analyses ---------------------------------------------------------------------------


location = line_location  # a Location for a recorded source line


def _locations(*pairs: tuple[SourceLine | None, LocationRole]) -> list[Location]:
    """The locations of ``pairs``, each (statement, role) once: two lines of one statement
    written over several lines are one place to change, not two."""
    found: list[Location] = []
    seen: set[tuple[str, int, str]] = set()
    for line, role in pairs:
        loc = location(line, role)
        if loc is None:
            continue
        key = (loc.file, statement_start(loc.file, loc.line), role)
        if key not in seen:
            seen.add(key)
            found.append(loc)
    return found


def statement_start(file: str, line: int) -> int:
    """The first line of the simple statement that spans ``line`` in ``file`` (``line``
    itself when the file cannot be read)."""
    import linecache

    return _statement_starts("".join(linecache.getlines(file))).get(line, line)


@functools.lru_cache(maxsize=64)
def _statement_starts(source: str) -> dict[int, int]:
    import ast

    starts: dict[int, int] = {}
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return starts
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and not hasattr(node, "body"):
            end = node.end_lineno or node.lineno
            if end > node.lineno:
                for number in range(node.lineno, end + 1):
                    starts[number] = node.lineno
    return starts


def _where(line: SourceLine | None) -> str:
    if line is None:
        return "an unknown line"
    return f"line {line[1]}"


def _top_modules(modules: Iterable[torch.nn.Module]) -> list[torch.nn.Module]:
    seen = list(modules)
    inner: set[int] = set()
    for module in seen:
        for child in module.modules():
            if child is not module:
                inner.add(id(child))
    return [m for m in seen if id(m) not in inner]


def container_attribute(
    module: torch.nn.Module, outer: torch.nn.Module
) -> tuple[str, SourceLine | None] | None:
    """The attribute of ``outer`` that holds ``module`` inside a plain list, tuple or dict
    (``self.cells = []``), and the line of ``outer``'s class that assigns it."""
    import gc

    attributes = vars(outer)
    name = next(
        (
            key
            for key, value in attributes.items()
            if isinstance(value, list | tuple | dict)
            and any(
                item is module for item in (value.values() if isinstance(value, dict) else value)
            )
        ),
        None,
    )
    if name is None:  # nested deeper (a list of lists): who refers to the module at all
        holders = [ref for ref in gc.get_referrers(module) if isinstance(ref, list | dict)]
        name = next(
            (key for key, value in attributes.items() if any(value is h for h in holders)), None
        )
    if name is None:
        return None
    return name, attribute_line(outer, name)


def attribute_line(owner: torch.nn.Module, name: str) -> SourceLine | None:
    """The line of ``owner``'s class (or a base class) that assigns ``self.<name>``."""
    import ast
    import linecache

    for cls in type(owner).__mro__:
        if cls is torch.nn.Module or cls is object:
            break
        codes = [f.__code__ for f in vars(cls).values() if hasattr(f, "__code__")]
        if not codes:
            continue
        file = codes[0].co_filename
        try:
            tree = ast.parse("".join(linecache.getlines(file)))
        except (SyntaxError, ValueError):
            continue
        firsts = {code.co_firstlineno for code in codes}
        for node in ast.walk(tree):
            if not isinstance(node, ast.ClassDef) or node.name != cls.__name__:
                continue
            if not any(getattr(item, "lineno", 0) in firsts for item in ast.walk(node)):
                continue
            for item in ast.walk(node):
                if not isinstance(item, ast.Assign | ast.AnnAssign):
                    continue
                targets = item.targets if isinstance(item, ast.Assign) else [item.target]
                if any(
                    isinstance(t, ast.Attribute)
                    and t.attr == name
                    and isinstance(t.value, ast.Name)
                    and t.value.id == "self"
                    for t in targets
                ):
                    return (file, item.lineno, "__init__")
    return None


def backpropagated(events: Events, node: NodeKey | None, after: int) -> bool:
    """Whether a backward that ran after ``after`` went through ``node`` (up through its
    recorded consumers to the backward's root); True when the node was never recorded."""
    if node is None or node not in events.nodes:
        return True
    roots = {
        key for b in events.backwards if b.error is None and b.order > after for key in b.roots
    }
    if not roots:
        return False
    seen = {node}
    frontier = [node]
    while frontier and len(seen) < 200_000:
        key = frontier.pop()
        if key in roots:
            return True
        record = events.nodes.get(key)
        for consumer in record.consumers if record is not None else ():
            if consumer not in seen:
                seen.add(consumer)
                frontier.append(consumer)
    return False


def left_set_by(
    set_stack: Sequence[SourceLine], work_stack: Sequence[SourceLine]
) -> SourceLine | None:
    """The line of the function that set a switch and returned with it still set, for
    work that then ran under it: the first frame of ``set_stack`` below the functions
    both stacks share (the caller that called that function, then did the work). None
    when the switch was set in a function the work runs in (set there on purpose, or
    the loop's own order, which GP131 reads).

    Functions are told apart by file and name: a frame that returned and a later call of
    the same function look alike, and that later call is where the work runs.
    """
    shared = 0
    for made, work in zip(set_stack, work_stack, strict=False):
        if (made[0], made[2]) != (work[0], work[2]):
            break
        shared += 1
    if shared == 0 or shared >= len(set_stack):
        return None
    return set_stack[shared]
