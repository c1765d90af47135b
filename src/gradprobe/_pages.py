"""The finding pages that ship inside the package, for ``gradprobe explain GP101``, SARIF
rules and the JSON report's ``docs`` path.

A page's path is relative to the docs root, and the same on the docs site and inside the
installed package: ``findings/gp101.md`` is ``docs/findings/gp101.md`` in the repository
and ``gradprobe/_docs/findings/gp101.md`` installed. In the repository
``src/gradprobe/_docs/findings`` is a symbolic link to ``docs/findings``, so each page is
one file in git; a wheel carries copies (pyproject's package-data).

Imports nothing heavy: the command line answers without torch.

Example:
    >>> from gradprobe._pages import docs_path, lookup, suggestions
    >>> docs_path("gp101")
    'findings/gp101.md'
    >>> lookup("gp205"), lookup("205"), lookup("dead_relu")
    ('GP205', 'GP205', 'GP205')
    >>> suggestions("GP2O5")[0]
    'GP205'
"""

from __future__ import annotations

import re
from importlib import resources

from gradprobe._codes import BUILTIN_CODES

__all__ = ["docs_path", "lookup", "page", "page_codes", "suggestions", "terminal_text"]

_KINDS = {entry.kind: entry.code for entry in BUILTIN_CODES}
# the footer of every page: on the site it leads to the index, in a terminal it cannot
_INDEX_LINK = re.compile(r"\[All finding codes\]\(\.\./findings\.md\)")


def docs_path(anchor: str) -> str:
    """The page of a code whose ``doc_anchor`` is ``anchor``, relative to the docs root
    (``findings/gp101.md``); a plug-in's URL stays as it is."""
    return anchor if "://" in anchor else f"findings/{anchor}.md"


def _folder() -> resources.abc.Traversable:
    return resources.files("gradprobe").joinpath("_docs", "findings")


def page_codes() -> tuple[str, ...]:
    """The codes that have a page shipped with the package, sorted."""
    folder = _folder()
    if not folder.is_dir():
        return ()
    return tuple(
        sorted(
            item.name[: -len(".md")].upper()
            for item in folder.iterdir()
            if re.fullmatch(r"gp\d+\.md", item.name)
        )
    )


def page(code: str) -> str | None:
    """The Markdown page of ``code`` (``"GP101"``), or None when none ships."""
    if not re.fullmatch(r"GP\d+", code):
        return None
    item = _folder().joinpath(f"{code.lower()}.md")
    return item.read_text(encoding="utf-8") if item.is_file() else None


def lookup(query: str) -> str | None:
    """The code meant by ``query``: ``GP101``, ``gp101``, ``101`` or a kind such as
    ``dead_relu``; None when no page ships for it."""
    text = query.strip()
    code = _KINDS.get(text.lower())
    if code is None:
        code = text.upper()
        if code.isdigit():
            code = f"GP{code}"
    return code if code in page_codes() else None


def suggestions(query: str, limit: int = 3) -> list[str]:
    """Codes close to ``query`` (by code, or by kind when ``query`` looks like a kind)."""
    import difflib  # only for a code that is not known

    codes = page_codes()
    text = query.strip()
    matches = difflib.get_close_matches(text.upper(), codes, n=limit, cutoff=0.6)
    if not matches:
        kinds = [kind for kind, code in _KINDS.items() if code in codes]
        close = difflib.get_close_matches(text.lower(), kinds, n=limit, cutoff=0.6)
        matches = [_KINDS[kind] for kind in close]
    return matches


def terminal_text(markdown: str) -> str:
    """A page as shown in a terminal: its link to the index of codes (which only the
    site can follow) becomes the command that lists them."""
    return _INDEX_LINK.sub("All finding codes: `gradprobe explain`", markdown)
