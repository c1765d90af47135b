"""A Griffe extension for the API reference (mkdocs.yml loads it). gradprobe's docstrings
head their doctests ``Example:``, which Griffe's Google style knows only as ``Examples:``
(read that way, they render as code instead of loose text), and name other objects with
Sphinx roles (``:class:`Graph```), which Markdown would show as they are: they become
inline code."""

from __future__ import annotations

import re
from typing import Any

import griffe

_HEADING = re.compile(r"^(\s*)Example:[ \t]*$", re.MULTILINE)
_ROLE = re.compile(r":(?:class|func|meth|data|mod|attr|exc|obj):`~?([^`]+)`")


class GradprobeDocstrings(griffe.Extension):
    """Rewrite each docstring before it is parsed."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            text = _HEADING.sub(r"\1Examples:", obj.docstring.value)
            obj.docstring.value = _ROLE.sub(r"`\1`", text)
