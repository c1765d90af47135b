"""The error catalogue (gradprobe.checks._catalogue), entry by entry: each script in
``error_catalogue/`` raises its message on this torch (the pattern in ``_compat`` still
matches), and ``gradprobe diagnose`` turns it into the entry's finding naming the lines
marked in the script, as written and with the body moved into ``def main():``."""

from __future__ import annotations

import ast
import json
import re
import runpy
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

from gradprobe.checks._catalogue import CATALOGUE, FAMILIES
from gradprobe.checks._errortext import explain_text
from gradprobe.diagnose import diagnose_script
from gradprobe.findings import CODES

SCRIPTS = Path(__file__).resolve().parent / "error_catalogue"
MARKER = re.compile(r"#\s*<-\s*([A-Z]+(?:,[A-Z]+)*)")
ENTRIES = {entry.key: entry for entry in CATALOGUE}


def _marks(source: str) -> dict[str, set[int]]:
    found: dict[str, set[int]] = {}
    for number, line in enumerate(source.splitlines(), start=1):
        match = MARKER.search(line)
        if match:
            for tag in match.group(1).split(","):
                found.setdefault(tag.lower(), set()).add(number)
    return found


def _stripped(source: str, *, in_main: bool) -> str:
    """The script without its markers (line numbers kept); with ``in_main`` its body after
    the docstring indented into ``def main():`` on the docstring's last line."""
    lines = [
        line[: m.start()].rstrip() if (m := MARKER.search(line)) else line
        for line in source.splitlines()
    ]
    if not in_main:
        return "\n".join(lines) + "\n"
    first = ast.parse(source).body[0]
    assert isinstance(first, ast.Expr), "each catalogue script starts with a docstring"
    last = first.end_lineno or first.lineno
    body = ["    " + line if line.strip() else line for line in lines[last:]]
    head = [*lines[: last - 1], "def main():"]
    return "\n".join(head + body + ["", "", "main()"]) + "\n"


def test_every_entry_has_a_script_and_every_script_an_entry() -> None:
    assert sorted(p.stem for p in SCRIPTS.glob("*.py")) == sorted(ENTRIES)
    assert len(ENTRIES) == len(CATALOGUE)


def test_entries_name_registered_codes_and_known_families() -> None:
    for entry in CATALOGUE:
        assert entry.code in CODES, entry.key
        assert entry.family in FAMILIES, entry.key
        assert entry.roles and set(entry.roles) <= {
            "cause",
            "error",
            "created",
            "saved",
            "registered",
            "warned",
        }


@pytest.mark.parametrize("key", sorted(ENTRIES))
def test_the_script_raises_the_entrys_message(key: str, tmp_path: Path) -> None:
    """The pattern in _compat matches what this torch raises (run on 2.13 and 2.14)."""
    entry = ENTRIES[key]
    script = tmp_path / f"{key}.py"
    script.write_text(_stripped((SCRIPTS / f"{key}.py").read_text(), in_main=False))
    if entry.kind == "warning":  # torch warns and the script runs to its end
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            runpy.run_path(str(script), run_name="__main__")
        texts = [str(w.message) for w in caught]
        assert any(entry.matches(text) for text in texts), texts
        return
    with warnings.catch_warnings(), pytest.raises(Exception) as raised:
        warnings.simplefilter("ignore")
        runpy.run_path(str(script), run_name="__main__")
    assert entry.matches(str(raised.value)), str(raised.value)[:300]


@pytest.mark.parametrize("in_main", [False, True], ids=["module", "main"])
@pytest.mark.parametrize("key", sorted(ENTRIES))
def test_diagnose_names_the_marked_lines(key: str, in_main: bool, tmp_path: Path) -> None:
    entry = ENTRIES[key]
    source = (SCRIPTS / f"{key}.py").read_text()
    marks = _marks(source)
    script = tmp_path / "train.py"
    script.write_text(_stripped(source, in_main=in_main))
    findings = _diagnosed(script, warns=entry.kind == "warning")
    mine = [f for f in findings if f["code"] == entry.code]
    assert mine, f"no {entry.code} in {[f['code'] for f in findings]}"
    finding = mine[0]
    named: dict[str, set[int]] = {}
    for loc in finding["locations"]:
        if Path(loc["file"]).resolve() == script.resolve():
            named.setdefault(loc["role"], set()).add(loc["line"])
    # the lines to change, and no other
    causes = marks.get("cause", set())
    assert named.get("cause", set()) == causes, (named, finding["message"])
    for role, lines in marks.items():
        if role == "also":
            continue
        assert lines <= named.get(role, set()), (role, named, finding["message"])
    assert set(named) <= set(entry.roles), (named, entry.roles)
    # no other finding blames another line of the script
    others = {
        loc["line"]
        for f in findings
        for loc in f["locations"]
        if loc["role"] == "cause" and Path(loc["file"]).resolve() == script.resolve()
    }
    # (ALSO: a line another finding may rightly name, such as the layer DDP found unused)
    allowed = causes | marks.get("error", set()) | marks.get("also", set())
    assert others <= allowed, (others, [f["code"] for f in findings])
    assert finding["message"]


def _diagnosed(script: Path, *, warns: bool) -> list[dict[str, Any]]:
    """The findings of ``gradprobe diagnose`` on ``script``, as their JSON. An error script
    runs in this process and must fail; a warning script runs in a fresh one (torch warns
    some of its warnings once per process) and must end normally."""
    if not warns:
        result = diagnose_script(script)
        assert result.exit_code == 1
        return [f.to_dict() for f in result.findings]
    out = script.with_suffix(".json")
    done = subprocess.run(
        [sys.executable, "-m", "gradprobe", "diagnose", "--json", str(out), str(script)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    report = json.loads(out.read_text())
    assert report["exit_code"] == 0, done.stderr[-2000:]
    findings: list[dict[str, Any]] = report["findings"]
    return findings


@pytest.mark.parametrize(
    "key",
    [e.key for e in CATALOGUE if e.code in {f"GP{n}" for n in range(149, 165)}],
)
def test_the_text_alone_is_explained(key: str) -> None:
    """explain_text knows every new message from its text alone (what ``explain()``
    re-raises torch's errors with, and what is left when the recording cannot name a
    line); whether an error is torch's is decided by explain_error, from its frames."""
    entry = ENTRIES[key]
    finding = explain_text(entry.message, RuntimeError)
    assert finding is not None and finding.code == entry.code
    assert finding.message and entry.message not in finding.message
