"""Findings: what gradprobe found wrong, in one shape for every analysis.

Every analysis (blame, watch, hooks, saliency, the pytest plugin) reports a
:class:`Finding`: a registered code (``GP101``), its snake_case ``kind``, a one-line
``title``, a ``message`` about this occurrence, a ``hint`` saying what to change, the names
involved, and source :class:`Location` s with roles. ``to_dict()`` gives the JSON shape
``gradprobe diagnose`` prints.

Codes live in :data:`CODES`, the one registry: GP1xx blame (autograd errors and their
causes), GP2xx numerics / watch, GP3xx hooks, GP4xx saliency. Each code has its own page,
``docs/findings/gp101.md``, indexed by ``docs/findings.md``.

Example:
    >>> from gradprobe.findings import make_finding
    >>> finding = make_finding("GP103", node="MulBackward0")
    >>> finding.kind
    'backward_through_freed_graph'
    >>> sorted(finding.to_dict())[:5]
    ['code', 'details', 'doc', 'docs', 'hint']
    >>> finding.to_dict()["docs"]
    'findings/gp103.md'
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

from gradprobe import _pages
from gradprobe._codes import BUILTIN_CODES, Code
from gradprobe.errors import (
    AutogradError,
    BackwardWouldFail,
    GradprobeTypeError,
    GradprobeValueError,
    describe,
)

if TYPE_CHECKING:
    import os
    from pathlib import Path

    from rich.console import Console, ConsoleOptions, RenderResult

    from gradprobe.graph import GraphSlice

__all__ = [
    "CODES",
    "AutogradError",
    "BackwardWouldFail",
    "Code",
    "Finding",
    "Location",
    "LocationRole",
    "make_finding",
    "register_code",
]

LocationRole = Literal["cause", "created", "saved", "error", "read", "registered", "warned"]
"""Why a source line is mentioned: ``cause`` is the line to change; ``created`` made the
tensor or node; ``saved`` is where autograd saved it; ``error`` is where PyTorch raised;
``read`` is where a value was read; ``registered`` is where a hook was registered;
``warned`` is where PyTorch warned (and went on)."""

_ROLES: frozenset[str] = frozenset(
    ("cause", "created", "saved", "error", "read", "registered", "warned")
)
_DOCS = "docs/findings"
# How gradprobe._source names a notebook cell instead of the temporary file IPython runs it
# from: "In [3]", its execution count.
_CELL = re.compile(r"In \[\d*\]")


@dataclass(frozen=True)
class Location:
    """A source line that matters to a finding, and why (``role``)."""

    file: str
    line: int
    role: LocationRole
    function: str | None = None
    text: str | None = None

    def __post_init__(self) -> None:
        if self.role not in _ROLES:
            msg = (
                f"Location(role={self.role!r}) is not a known role; use one of "
                f"{', '.join(sorted(_ROLES))} ('cause' is the line the user should change)."
            )
            raise GradprobeValueError(msg)
        if isinstance(self.line, bool) or not isinstance(self.line, int) or self.line < 1:
            msg = f"Location(line=...) must be a 1-based line number, got {describe(self.line)}."
            raise GradprobeValueError(msg)

    def to_dict(self) -> dict[str, Any]:
        """``{"role", "file", "line", "function", "text"}``."""
        return {
            "role": self.role,
            "file": self.file,
            "line": self.line,
            "function": self.function,
            "text": self.text,
        }

    @property
    def where(self) -> str:
        """``file:line``; for code run in a notebook cell (``file`` is ``In [3]``, the
        cell's execution count), ``In [3], line 2``."""
        return source_line(self.file, self.line)

    def __str__(self) -> str:
        where = self.where
        if self.function:
            where += f" in {self.function}"
        return f"{self.role}: {where}" + (f": {self.text}" if self.text else "")


def source_line(file: str, line: int) -> str:
    """``file:line``, or ``In [3], line 2`` when ``file`` names a notebook cell."""
    return f"{file}, line {line}" if _CELL.fullmatch(file) else f"{file}:{line}"


class Details(Mapping[str, Any]):
    """Read-only extra data of a finding (JSON-ready values); hashable and picklable."""

    __slots__ = ("_items",)
    _items: dict[str, Any]

    def __init__(self, items: Mapping[str, Any] | None = None) -> None:
        object.__setattr__(self, "_items", dict(items or {}))

    def __getitem__(self, key: str) -> Any:
        return self._items[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        return hash(json.dumps(_jsonable(self._items), sort_keys=True, default=repr))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Mapping) and self._items == dict(other)

    def __repr__(self) -> str:
        return f"Details({self._items!r})"

    def __reduce__(self) -> tuple[type[Details], tuple[dict[str, Any]]]:
        return (Details, (dict(self._items),))

    def __setattr__(self, name: str, value: object) -> None:
        msg = "Finding.details is read-only"
        raise AttributeError(msg)


def _jsonable(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(key): _jsonable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(item) for item in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


@dataclass(frozen=True)
class Finding:
    """One problem gradprobe found, with everything needed to show or serialize it.

    ``tensor``, ``node``, ``module`` and ``parameter`` name what is involved (a tensor
    description, an autograd node such as ``MulBackward0``, a module path, a parameter
    name); ``details`` holds extra JSON-ready data specific to the code. ``graph_slice``
    is the part of the backward graph around the problem, as plain data, when the
    recording could see it (not part of equality, hashing or ``to_dict()``).
    """

    code: str
    kind: str
    title: str
    message: str
    hint: str
    tensor: str | None = None
    node: str | None = None
    module: str | None = None
    parameter: str | None = None
    locations: tuple[Location, ...] = ()
    details: Mapping[str, Any] = field(default_factory=Details)
    graph_slice: GraphSlice | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.details, Details):
            object.__setattr__(self, "details", Details(self.details))
        locations: object = self.locations
        if not isinstance(locations, tuple):  # a list from user code
            object.__setattr__(self, "locations", tuple(self.locations))

    @property
    def is_note(self) -> bool:
        """Whether this says what gradprobe could not observe rather than what is wrong (a
        ``note`` code, such as GP503): ``Recording.notes`` holds these, not ``findings``."""
        entry = CODES.get(self.code)
        return entry is not None and entry.note

    @property
    def doc(self) -> str:
        """Where this code is documented: ``docs/findings/gp101.md``."""
        entry = CODES.get(self.code)
        if entry is not None and "://" in entry.doc_anchor:  # a plug-in's own page
            return entry.doc_anchor
        return f"{_DOCS}/{_anchor(self.code)}.md"

    @property
    def read_more(self) -> str:
        """How a reader gets this code's page: ``gradprobe explain GP101`` (the pages ship
        with gradprobe, unlike the repository path), or a plug-in's own URL."""
        doc = self.doc
        return doc if "://" in doc else f"gradprobe explain {self.code}"

    @property
    def cause(self) -> Location | None:
        """The first location with role ``cause`` (the line to change), if any."""
        return next((loc for loc in self.locations if loc.role == "cause"), None)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``code kind title message hint tensor node module locations`` first,
        then ``parameter``, ``details``, ``doc`` and ``docs``: the code's page relative to
        the docs root (``findings/gp101.md``, on the docs site and inside the installed
        package, printed by ``gradprobe explain GP101``), or a plug-in's URL."""
        return {
            "code": self.code,
            "kind": self.kind,
            "title": self.title,
            "message": self.message,
            "hint": self.hint,
            "tensor": self.tensor,
            "node": self.node,
            "module": self.module,
            "locations": [loc.to_dict() for loc in self.locations],
            "parameter": self.parameter,
            "details": _jsonable(self.details),
            "doc": self.doc,
            "docs": _pages.docs_path(_anchor(self.code)),
        }

    def __str__(self) -> str:
        text = f"{self.code} {self.kind}: {self.title}. {self.message}"
        if self.hint:
            text += f" Fix: {self.hint}"
        if self.locations:
            text += " (" + "; ".join(str(loc) for loc in self.locations) + ")"
        return text + f" See: {self.read_more}."

    def to_svg(self) -> str:
        """A picture of the problem as SVG text: the slice of the backward graph around it
        with the culprit highlighted (class ``gp-problem``), the cause line and a legend.

        Raises:
            GraphvizNotFoundError: no Graphviz layout engine (see ``gradprobe.render``).
        """
        from gradprobe.render.picture import finding_svg

        return finding_svg(self)

    def save_svg(self, path: str | os.PathLike[str]) -> Path:
        """Write :meth:`to_svg` to ``path`` (UTF-8) and return the path."""
        from gradprobe.render.picture import save_finding_svg

        return save_finding_svg(self, path)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        from gradprobe.render.findings import finding_panel

        yield finding_panel(self)

    def _repr_html_(self) -> str:
        """The finding as HTML, for notebooks: code, kind and title, then its rows."""
        from gradprobe.render.html_report import finding_html

        return finding_html(self)


def _anchor(code: str) -> str:
    entry = CODES.get(code)
    return entry.doc_anchor if entry is not None else code.lower()


def make_finding(
    code: str,
    *,
    message: str | None = None,
    hint: str | None = None,
    tensor: str | None = None,
    node: str | None = None,
    module: str | None = None,
    parameter: str | None = None,
    locations: tuple[Location, ...] | list[Location] = (),
    details: Mapping[str, Any] | None = None,
) -> Finding:
    """A :class:`Finding` for a registered ``code``; kind, title and (by default) message
    and hint come from :data:`CODES`.

    Raises:
        GradprobeValueError: ``code`` is not registered.
    """
    given: object = code
    if not isinstance(given, str):
        msg = f"make_finding() expects a code string such as 'GP101', got {describe(code)}."
        raise GradprobeTypeError(msg)
    entry = CODES.get(code)
    if entry is None:
        msg = (
            f"make_finding({code!r}): no such code. Registered codes are "
            f"{', '.join(CODES)}; a plug-in check brings its own in new_codes."
        )
        raise GradprobeValueError(msg)
    return Finding(
        code=entry.code,
        kind=entry.kind,
        title=entry.title,
        message=entry.explanation if message is None else message,
        hint=entry.hint if hint is None else hint,
        tensor=tensor,
        node=node,
        module=module,
        parameter=parameter,
        locations=tuple(locations),
        details=Details(details),
    )


# -- the registry ----------------------------------------------------------------------------


_REGISTRY: dict[str, Code] = {entry.code: entry for entry in BUILTIN_CODES}
CODES: Mapping[str, Code] = MappingProxyType(_REGISTRY)
"""Every registered finding code, by code (``"GP101"``): gradprobe's in numeric order, then
those plug-in checks brought (:func:`register_code`)."""


def register_code(code: Code) -> None:
    """Add a plug-in check's code to :data:`CODES` (``gradprobe.checks.register`` calls this
    for a check's ``new_codes``). The ``GP`` prefix is gradprobe's own; registering the
    same code again with the same texts has no effect.

    Raises:
        GradprobeValueError: the code is taken by different texts, or starts with ``GP``.
    """
    known = _REGISTRY.get(code.code)
    if known == code:
        return
    if known is not None or code.code.startswith("GP"):
        msg = (
            f"register_code({code.code!r}): "
            + (
                "that code is already registered with other texts"
                if known
                else "the GP prefix is reserved for gradprobe's own codes"
            )
            + "; give the plug-in's codes a prefix of their own, such as 'ACME101'."
        )
        raise GradprobeValueError(msg)
    _REGISTRY[code.code] = code
