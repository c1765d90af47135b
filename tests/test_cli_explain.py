"""``gradprobe explain GP101``: the finding pages ship inside the package and print in a
terminal without torch; unknown codes are one line with close matches."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

import gradprobe
from gradprobe import _pages
from gradprobe._codes import BUILTIN_CODES
from gradprobe.cli import main
from gradprobe.findings import CODES

_SRC = str(Path(gradprobe.__file__).resolve().parent.parent)
ROOT = Path(__file__).resolve().parents[1]
PAGES = ROOT / "docs" / "findings"


def _run(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gradprobe", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": _SRC, "COLUMNS": "80", **env},
        check=False,
    )


def test_explain_prints_the_page_of_a_code_in_a_pipe() -> None:
    done = _run("explain", "GP101")
    assert done.returncode == 0, done.stderr
    page = _pages.page("GP101")
    assert page is not None and page.startswith("# GP101 `inplace_modified_saved_tensor`")
    # the page as written, with its link to the index (only the site can follow it)
    # turned into the command that lists the codes
    assert done.stdout == page.replace(
        "[All finding codes](../findings.md)", "All finding codes: `gradprobe explain`"
    )
    assert "**Fix:**" in done.stdout and done.stderr == ""


@pytest.mark.parametrize("query", ["gp205", "205", "dead_relu", " GP205 "])
def test_a_code_can_be_written_several_ways(query: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", query]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# GP205 `dead_relu`")


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("GP2O5", "gradprobe explain: no finding code 'GP2O5'; did you mean GP205, "),
        ("dead_relus", "gradprobe explain: no finding code 'dead_relus'; did you mean GP205? "),
        ("banana", "gradprobe explain: no finding code 'banana'; codes look like GP101 or "),
    ],
)
def test_an_unknown_code_is_one_line_with_close_matches(query: str, expected: str) -> None:
    done = _run("explain", query)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith(expected), done.stderr
    assert done.stderr.endswith("`gradprobe explain` lists them all.\n")
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr


def test_explain_without_a_code_lists_every_code_within_80_columns() -> None:
    done = _run("explain")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80
    heads = [line.split() for line in lines if not line.startswith(" ")]
    assert [head[0] for head in heads] == list(_pages.page_codes())
    for (code, kind), entry in zip(heads, BUILTIN_CODES, strict=True):
        assert (code, kind) == (entry.code, entry.kind)
    # every title whole: its words in order, wrapped onto indented lines, none cut
    text = " ".join(done.stdout.split())
    for entry in BUILTIN_CODES:
        assert f"{entry.code} {entry.kind} {entry.title}" in text


def test_in_a_terminal_the_page_is_rendered_markdown() -> None:
    done = _run("explain", "GP107", FORCE_COLOR="1", TERM="xterm-256color")
    assert done.returncode == 0, done.stderr
    assert "\x1b[" in done.stdout  # styled by rich
    plain = " ".join(done.stdout.split())
    assert "GP107" in plain and "parameter_without_grad" in plain
    assert "**Fix:**" not in done.stdout  # rendered, not shown as markup


def test_explain_and_its_help_do_not_import_torch() -> None:
    code = """
        import sys
        from gradprobe.cli import main
        assert main(["explain", "GP101"]) == 0
        assert main(["explain"]) == 0
        try:
            main(["explain", "--help"])
        except SystemExit as stop:
            assert stop.code == 0
        print("torch imported:", "torch" in sys.modules)
    """
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": _SRC},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "torch imported: False"


@pytest.mark.parametrize("args", [["explain"], ["explain", "GP101"]], ids=["list", "page"])
def test_a_reader_that_leaves_early_gets_no_traceback(args: list[str]) -> None:
    # `gradprobe explain | head -1`, deterministically: stdout is a pipe nobody reads
    code = f"""
        import os, sys
        read, write = os.pipe()
        os.close(read)
        os.dup2(write, 1)
        from gradprobe.cli import main
        sys.stderr.write(f"exit {{main({args!r})}}\\n")
    """
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": _SRC},
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, "exit 0\n")


def test_without_its_pages_explain_says_so_in_one_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(_pages, "_folder", lambda: tmp_path / "missing")
    assert main(["explain", "GP101"]) == 2
    err = capsys.readouterr().err
    assert err == (
        "gradprobe explain: the finding pages are not installed with this gradprobe "
        "(gradprobe/_docs/findings is missing); reinstall it.\n"
    )


# -- the pages inside the package ----------------------------------------------------------------


def test_every_code_has_a_page_inside_the_package() -> None:
    assert set(_pages.page_codes()) == {code for code in CODES if code.startswith("GP")}
    for code in _pages.page_codes():
        page = _pages.page(code)
        assert page is not None and page.startswith(f"# {code} `{CODES[code].kind}`")


@pytest.mark.skipif(not PAGES.is_dir(), reason="docs/ is not part of this installation")
def test_the_package_pages_are_the_docs_pages() -> None:
    # in the repository the package's folder links to docs/findings: one copy in git
    assert {path.stem.upper() for path in PAGES.glob("gp*.md")} == set(_pages.page_codes())
    for path in PAGES.glob("gp*.md"):
        assert _pages.page(path.stem.upper()) == path.read_text(encoding="utf-8")


def _build_isolation() -> list[str]:
    """Build with the installed setuptools when it is new enough (no network needed)."""
    if importlib.util.find_spec("setuptools") is None:
        return []
    import setuptools

    major = int(setuptools.__version__.split(".")[0])
    return ["--no-build-isolation"] if major >= 68 else []


@pytest.mark.skipif(not (ROOT / "pyproject.toml").is_file(), reason="not a source checkout")
def test_a_built_wheel_carries_every_page(tmp_path: Path) -> None:
    # a copy of what the build reads, links kept as links, so the checkout gets no build/
    source = tmp_path / "source"
    shutil.copytree(
        ROOT / "src",
        source / "src",
        symlinks=True,
        ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"),
    )
    shutil.copytree(PAGES, source / "docs" / "findings")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    assert (source / "src" / "gradprobe" / "_docs" / "findings").is_symlink()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "-q",
            *_build_isolation(),
            "-w",
            str(tmp_path / "dist"),
            str(source),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    (wheel,) = (tmp_path / "dist").glob("gradprobe-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        shipped = {
            Path(name).stem.upper(): hashlib.sha256(archive.read(name)).hexdigest()
            for name in archive.namelist()
            if name.startswith("gradprobe/_docs/findings/")
        }
    expected = {
        path.stem.upper(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in PAGES.glob("gp*.md")
    }
    assert shipped == expected and len(shipped) == len(_pages.page_codes())
