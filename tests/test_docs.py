"""docs/ shows real output: regenerating it from the code must change nothing."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs"


@pytest.fixture(scope="module")
def generate():  # type: ignore[no-untyped-def]
    if not (DOCS / "generate.py").exists():
        pytest.skip("docs/ is not part of this installation")
    spec = importlib.util.spec_from_file_location("docs_generate", DOCS / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["docs_generate"] = module
    spec.loader.exec_module(module)
    return module


def test_docs_match_what_the_code_produces(generate) -> None:  # type: ignore[no-untyped-def]
    assert generate.drift() == [], "docs are out of date: run `nox -s docs`"


def test_getting_started_shows_the_demo_report(generate) -> None:  # type: ignore[no-untyped-def]
    page = (DOCS / "getting-started.md").read_text()
    report, _ = generate.demo_report()
    assert report in page
    assert "4 of 6 parameters got no gradient" in report
    assert "![the demo's autograd graph](images/demo.svg)" in page


def test_drift_is_detected(generate, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    page = tmp_path / "page.md"
    page.write_text("<!-- gradprobe:demo-report -->\nstale\n<!-- /gradprobe:demo-report -->\n")
    filled = generate.fill(page.read_text(), generate.demo_blocks())
    assert "stale" not in filled and "4 of 6 parameters" in filled
