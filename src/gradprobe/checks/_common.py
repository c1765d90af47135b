"""What every check uses to name lines: a recorded ``(file, line, function)`` as a
finding's :class:`~gradprobe.Location`, or as "line N" in a message."""

from __future__ import annotations

from collections.abc import Iterable

import torch

from gradprobe._recorder import (
    SourceLine,
)
from gradprobe._source import line_location
from gradprobe.findings import Location, LocationRole

# -- analyses ---------------------------------------------------------------------------


location = line_location  # a Location for a recorded source line


def _locations(*pairs: tuple[SourceLine | None, LocationRole]) -> list[Location]:
    found: list[Location] = []
    seen: set[tuple[str, int, str]] = set()
    for line, role in pairs:
        loc = location(line, role)
        if loc is not None and (loc.file, loc.line, role) not in seen:
            seen.add((loc.file, loc.line, role))
            found.append(loc)
    return found


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
