"""Finding data, the code registry, and docs/findings/ staying in sync with it."""

from __future__ import annotations

import json
import pickle
import re
from pathlib import Path

import pytest
from rich.console import Console

from gradprobe.errors import GradprobeError, GradprobeTypeError, GradprobeValueError
from gradprobe.findings import (
    CODES,
    BackwardWouldFail,
    Finding,
    Location,
    make_finding,
)

DOCS = Path(__file__).resolve().parent.parent / "docs" / "findings.md"
REQUIRED = {
    "GP101": "inplace_modified_saved_tensor",
    "GP102": "leaf_modified_inplace",
    "GP103": "backward_through_freed_graph",
    "GP104": "backward_without_grad_fn",
    "GP105": "nonscalar_backward",
    "GP106": "grad_of_non_leaf",
    "GP107": "parameter_without_grad",
    "GP108": "saved_tensor_mutated_without_version_bump",
    "GP109": "parameters_changed_before_backward",
    "GP110": "grad_zeroed_in_accumulation",
    "GP111": "freeze_did_nothing",
    "GP112": "graph_kept_alive_across_iterations",
    "GP201": "nan_in_forward",
    "GP202": "nan_in_backward",
    "GP203": "exploding_gradient",
    "GP204": "vanishing_gradient",
    "GP205": "dead_relu",
    "GP301": "legacy_backward_hook",
    "GP302": "backward_hook_on_composite_module",
    "GP303": "full_hook_input_without_grad",
    "GP304": "hook_bypassed_by_forward_call",
    "GP305": "full_hook_with_inplace",
    "GP306": "hook_on_dict_output",
    "GP401": "relu_invisible_to_saliency",
}
JSON_KEYS = ["code", "kind", "title", "message", "hint", "tensor", "node", "module", "locations"]


def _sample() -> Finding:
    return make_finding(
        "GP101",
        message="b was modified",
        tensor="b",
        node="MulBackward0",
        locations=[Location("/abs/train.py", 12, "cause", function="step", text="b[0] = 1")],
        details={"slots": ("self", "other"), "version_saved": 0},
    )


def test_registry_has_every_required_code_with_its_kind() -> None:
    assert {code: CODES[code].kind for code in REQUIRED if code in CODES} == REQUIRED
    for code, entry in CODES.items():
        assert entry.code == code
        assert re.fullmatch(r"GP[1-5]\d\d", code)
        assert re.fullmatch(r"[a-z]+(_[a-z]+)*", entry.kind)
        assert entry.title and "\n" not in entry.title and not entry.title.endswith(".")
        assert entry.explanation and entry.hint
        assert entry.doc_anchor == code.lower()
    assert len({entry.kind for entry in CODES.values()}) == len(CODES)


def test_registry_is_read_only() -> None:
    with pytest.raises(TypeError):
        CODES["GP999"] = CODES["GP101"]  # type: ignore[index]


def test_every_code_has_a_docs_page_and_no_page_is_orphaned() -> None:
    pages = {path.stem.upper(): path for path in (DOCS.parent / "findings").glob("gp*.md")}
    assert set(pages) == set(CODES)
    index = DOCS.read_text(encoding="utf-8")
    for code, path in pages.items():
        body = path.read_text(encoding="utf-8")
        assert body.splitlines()[0] == f"# {code} `{CODES[code].kind}`", code
        assert "**Fix:**" in body, code
        assert f"[{code}](findings/{code.lower()}.md)" in index, code
        assert make_finding(code).doc == f"docs/findings/{code.lower()}.md"


def test_make_finding_fills_texts_from_the_registry() -> None:
    finding = make_finding("GP103", node="MulBackward0")
    entry = CODES["GP103"]
    assert (finding.kind, finding.title, finding.message, finding.hint) == (
        entry.kind,
        entry.title,
        entry.explanation,
        entry.hint,
    )
    assert finding.doc == "docs/findings/gp103.md"
    # what a reader types: the page ships with gradprobe, the repository path does not
    assert finding.read_more == "gradprobe explain GP103"
    assert str(finding).endswith(" See: gradprobe explain GP103.")
    custom = make_finding("GP103", message="m", hint="h")
    assert (custom.message, custom.hint) == ("m", "h")


def test_make_finding_rejects_unknown_codes() -> None:
    with pytest.raises(GradprobeValueError, match=r"'GP999'.*GP101"):
        make_finding("GP999")
    with pytest.raises(GradprobeTypeError, match="code string"):
        make_finding(101)  # type: ignore[arg-type]


def test_to_dict_has_the_diagnose_shape_and_is_json() -> None:
    data = json.loads(json.dumps(_sample().to_dict()))
    assert list(data)[: len(JSON_KEYS)] == JSON_KEYS
    assert data["code"] == "GP101"
    assert data["kind"] == "inplace_modified_saved_tensor"
    assert data["tensor"] == "b"
    assert data["node"] == "MulBackward0"
    assert data["module"] is None
    assert data["locations"] == [
        {
            "role": "cause",
            "file": "/abs/train.py",
            "line": 12,
            "function": "step",
            "text": "b[0] = 1",
        }
    ]
    assert data["details"] == {"slots": ["self", "other"], "version_saved": 0}
    assert data["doc"] == "docs/findings/gp101.md"
    # relative to the docs root: the site's page, and the page installed with the package
    assert data["docs"] == "findings/gp101.md"


def test_finding_is_frozen_hashable_and_picklable() -> None:
    finding = _sample()
    assert isinstance(finding.locations, tuple)
    with pytest.raises(AttributeError):
        finding.code = "GP102"  # type: ignore[misc]
    with pytest.raises(TypeError):
        finding.details["x"] = 1  # type: ignore[index]
    assert hash(finding) == hash(_sample())
    assert pickle.loads(pickle.dumps(finding)) == finding
    assert finding.cause is not None and finding.cause.line == 12


def test_str_is_one_readable_paragraph() -> None:
    text = str(_sample())
    assert "\n" not in text
    assert text.startswith("GP101 inplace_modified_saved_tensor: ")
    assert "b was modified" in text and "Fix: " in text and "/abs/train.py:12" in text


def test_rich_rendering_shows_code_message_and_fix() -> None:
    console = Console(width=120, record=True, color_system=None)
    console.print(_sample())
    out = console.export_text()
    assert "GP101" in out and "b was modified" in out and "MulBackward0" in out
    assert "fix" in out and "/abs/train.py:12" in out


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"role": "blame"}, "role='blame'"),
        ({"line": 0}, "line"),
        ({"line": True}, "line"),
    ],
)
def test_location_rejects_bad_values(kwargs: dict[str, object], match: str) -> None:
    args: dict[str, object] = {"file": "/a.py", "line": 1, "role": "cause"} | kwargs
    with pytest.raises(GradprobeValueError, match=match):
        Location(**args)  # type: ignore[arg-type]


def test_backward_would_fail_is_both_families_and_pickles() -> None:
    error = BackwardWouldFail("boom", (_sample(),))
    assert isinstance(error, GradprobeError) and isinstance(error, RuntimeError)
    again = pickle.loads(pickle.dumps(error))
    assert str(again) == "boom" and again.findings == (_sample(),)
    assert again.finding == _sample()
