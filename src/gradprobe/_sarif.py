"""``gradprobe diagnose --sarif PATH``: the findings as a SARIF 2.1.0 log, the format GitHub
code scanning and editors' SARIF viewers read, so findings show on the lines they name.

One run, tool ``gradprobe``; one rule per registered code (its title, explanation and its
page as help); one result per finding. A result's primary location is the finding's
``cause`` (the line to change), or its first location when it has no cause, or the script
itself when it has none; every location of the finding is also a related location whose
message is its role. Files in the source tree (the git work tree around the working
directory, or the working directory outside one) are written relative to the base
``%SRCROOT%``, as GitHub code scanning wants them (relative to the repository's root);
others as ``file://`` URIs.

A result's level is ``error`` when the script died at one of the finding's lines (the
finding explains the exception), ``warning`` otherwise.

Example:
    >>> from gradprobe.diagnose import Diagnosis
    >>> from gradprobe.findings import Location, make_finding
    >>> cause = Location("/work/train.py", 12, "cause", text="y.relu_()")
    >>> run = Diagnosis("/work/train.py", (), 0, None, (make_finding("GP101", locations=[cause]),))
    >>> log = sarif_log(run, root="/work")
    >>> result = log["runs"][0]["results"][0]
    >>> result["ruleId"], result["locations"][0]["physicalLocation"]["artifactLocation"]
    ('GP101', {'uri': 'train.py', 'uriBaseId': '%SRCROOT%'})
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from gradprobe import _pages
from gradprobe.findings import CODES, Code, Finding, Location

if TYPE_CHECKING:
    from gradprobe.diagnose import Diagnosis

__all__ = ["SARIF_SCHEMA", "sarif_log", "source_root", "write_sarif"]

SARIF_SCHEMA = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
_BASE = "%SRCROOT%"
_ROLE_TEXT = {
    "cause": "cause: the line to change",
    "created": "created the tensor or autograd node",
    "saved": "autograd saved the tensor here",
    "error": "PyTorch raised here",
    "read": "the value was read here",
    "registered": "the hook was registered here",
    "warned": "PyTorch warned here",
}


def sarif_log(
    diagnosis: Diagnosis, *, root: str | os.PathLike[str] | None = None
) -> dict[str, Any]:
    """The SARIF 2.1.0 log of ``diagnosis`` as JSON-ready data; paths under ``root``
    (default: :func:`source_root` of the working directory) are relative to ``%SRCROOT%``."""
    from gradprobe import __version__

    base = Path(root).resolve() if root is not None else source_root(Path.cwd())
    rules = list(CODES.values())
    index = {entry.code: n for n, entry in enumerate(rules)}
    raised = _raised_at(diagnosis.error)
    invocation: dict[str, Any] = {
        "executionSuccessful": True,
        "exitCode": diagnosis.exit_code,
        "properties": {"script": diagnosis.script, "argv": list(diagnosis.argv)},
    }
    error = diagnosis.to_dict()["error"]
    if error is not None:
        invocation["exitCodeDescription"] = f"{error['type']}: {error['message']}"
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "gradprobe",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "rules": [_rule(entry) for entry in rules],
                    }
                },
                "invocations": [invocation],
                "originalUriBaseIds": {_BASE: {"uri": _directory_uri(base)}},
                "results": [
                    _result(finding, index.get(finding.code), base, diagnosis.script, raised)
                    for finding in diagnosis.findings
                ],
            }
        ],
    }


def write_sarif(
    diagnosis: Diagnosis,
    path: str | os.PathLike[str],
    *,
    root: str | os.PathLike[str] | None = None,
) -> Path:
    """Write :func:`sarif_log` to ``path`` (UTF-8 JSON) and return the path."""
    target = Path(path)
    text = json.dumps(sarif_log(diagnosis, root=root), indent=2, ensure_ascii=False)
    target.write_text(text + "\n", encoding="utf-8")
    return target


def source_root(start: str | os.PathLike[str]) -> Path:
    """The root of the git work tree holding ``start`` (the nearest directory with a
    ``.git`` entry, a folder or a worktree's file), or ``start`` itself outside one."""
    here = Path(start).resolve()
    for folder in (here, *here.parents):
        if (folder / ".git").exists():
            return folder
    return here


def _rule(entry: Code) -> dict[str, Any]:
    docs = _pages.docs_path(entry.doc_anchor)
    rule: dict[str, Any] = {
        "id": entry.code,
        "name": entry.kind,
        "shortDescription": {"text": _sentence(entry.title)},
        "fullDescription": {"text": entry.explanation},
        "defaultConfiguration": {"level": "warning"},
        "properties": {"docs": docs, "tags": ["autograd"]},
    }
    page = _pages.page(entry.code)
    if page is not None:
        rule["help"] = {"text": _pages.terminal_text(page), "markdown": page}
    else:  # a plug-in's code documents itself at its URL
        rule["help"] = {"text": f"{entry.explanation}\n\nFix: {entry.hint}"}
        if "://" in docs:
            rule["helpUri"] = docs
    return rule


def _result(
    finding: Finding,
    rule_index: int | None,
    base: Path,
    script: str,
    raised: frozenset[tuple[str, int]],
) -> dict[str, Any]:
    primary = finding.cause or (finding.locations[0] if finding.locations else None)
    if primary is None:
        where: dict[str, Any] = {"physicalLocation": {"artifactLocation": _artifact(script, base)}}
    else:
        where = _location(primary, base)
    message = f"{_sentence(finding.title)}. {finding.message}"
    if finding.hint:
        message += f" Fix: {finding.hint}"
    data = finding.to_dict()
    properties = {
        key: data[key]
        for key in ("kind", "tensor", "node", "module", "parameter", "docs")
        if data.get(key) is not None
    }
    if data["details"]:
        properties["details"] = data["details"]
    result: dict[str, Any] = {
        "ruleId": finding.code,
        "level": "error" if _explains(finding, raised) else "warning",
        "message": {"text": message},
        "locations": [where],
        "partialFingerprints": {"gradprobe/v1": _fingerprint(finding, primary, base)},
        "properties": properties,
    }
    if rule_index is not None:
        result["ruleIndex"] = rule_index
    if finding.locations:
        result["relatedLocations"] = [
            {"id": n, **_location(location, base, message=True)}
            for n, location in enumerate(finding.locations, start=1)
        ]
    return result


def _location(location: Location, base: Path, *, message: bool = False) -> dict[str, Any]:
    region: dict[str, Any] = {"startLine": location.line}
    if location.text:
        region["snippet"] = {"text": location.text}
    where: dict[str, Any] = {
        "physicalLocation": {"artifactLocation": _artifact(location.file, base), "region": region}
    }
    if location.function and location.function != "<module>":
        where["logicalLocations"] = [{"name": location.function, "kind": "function"}]
    if message:
        text = _ROLE_TEXT[location.role]
        if location.function and location.function != "<module>":
            text += f" (in {location.function})"
        where["message"] = {"text": text}
    return where


def _artifact(file: str, base: Path) -> dict[str, str]:
    """A file as SARIF names it: relative to ``%SRCROOT%`` when under ``base``, a
    ``file://`` URI when elsewhere, a relative reference for names that are no path
    (``<string>``, a notebook cell)."""
    path = Path(file)
    if not path.is_absolute():
        return {"uri": quote(PurePosixPath(*path.parts).as_posix() if path.parts else file)}
    try:
        inside = path.relative_to(base)
    except ValueError:
        return {"uri": path.as_uri()}
    return {"uri": quote(inside.as_posix()), "uriBaseId": _BASE}


def _directory_uri(path: Path) -> str:
    uri = path.as_uri()
    return uri if uri.endswith("/") else uri + "/"


def _sentence(title: str) -> str:
    return title[:1].upper() + title[1:]


def _frames(error: BaseException | None) -> Iterator[tuple[str, int]]:
    seen: set[int] = set()
    pending = [error]
    while pending:
        current = pending.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        tb = current.__traceback__
        while tb is not None:
            yield (tb.tb_frame.f_code.co_filename, tb.tb_lineno)
            tb = tb.tb_next
        pending.extend((current.__cause__, current.__context__))


def _raised_at(error: BaseException | None) -> frozenset[tuple[str, int]]:
    """The lines the script's exception passed through (its chained ones too)."""
    if error is None or isinstance(error, (SystemExit, KeyboardInterrupt)):
        return frozenset()
    return frozenset((str(Path(file).resolve()), line) for file, line in _frames(error))


def _explains(finding: Finding, raised: frozenset[tuple[str, int]]) -> bool:
    return any(
        (str(Path(location.file).resolve()), location.line) in raised
        for location in finding.locations
    )


def _fingerprint(finding: Finding, primary: Location | None, base: Path) -> str:
    """Stable across runs and edits elsewhere in the file: the code and the cause's file,
    function and source text, not its line number."""
    parts = [finding.code]
    if primary is not None:
        parts += [
            json.dumps(_artifact(primary.file, base), sort_keys=True),
            primary.function or "",
            (primary.text or "").strip(),
        ]
    return hashlib.sha256("\0".join(parts).encode("utf-8")).hexdigest()[:32]
