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
