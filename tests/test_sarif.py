"""``gradprobe diagnose --sarif PATH``: SARIF 2.1.0 that validates against the official schema
(vendored in tests/data, see its NOTICE), one rule per code, one result per finding, the
cause as the primary location and every location as a related one."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import gradprobe
from gradprobe import _pages
from gradprobe._sarif import SARIF_SCHEMA, sarif_log, write_sarif
from gradprobe.diagnose import Diagnosis, diagnose
from gradprobe.errors import GradprobeValueError
from gradprobe.findings import CODES, Location, make_finding

jsonschema = pytest.importorskip("jsonschema")

DATA = Path(__file__).resolve().parent / "data"
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
_SRC = str(Path(gradprobe.__file__).resolve().parent.parent)

# Two findings: GP101 (the write that breaks backward, the line it raised at) and GP106
# (.grad read on a non-leaf); the model's forward puts a function name on a location.
SCRIPT = """\
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        y = self.fc(x).sigmoid()
        y.mul_(2)
        return y


probe = torch.ones(3, requires_grad=True).double()
(probe * 2).sum().backward()
print(probe.grad)
Net()(torch.ones(2, 3)).sum().backward()
"""


def _validator() -> Any:
    schema = json.loads((DATA / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    checker = jsonschema.FormatChecker()
    # without these the schema's formats would pass unchecked (they need the optional
    # rfc3986-validator and rfc3339-validator packages, in the test extra)
    assert {"uri", "uri-reference", "date-time"} <= set(checker.checkers)
    return jsonschema.Draft4Validator(schema, format_checker=checker)


def _errors(log: dict[str, Any]) -> list[str]:
    return [
        f"{'/'.join(map(str, error.absolute_path))}: {error.message}"
        for error in _validator().iter_errors(log)
    ]


def _run(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gradprobe", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env=env
        or {"COLUMNS": "100", "PATH": "/usr/bin:/bin", "HOME": str(cwd), "PYTHONPATH": _SRC},
        check=False,
    )


@pytest.fixture(scope="module")
def diagnosed(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, dict[str, Any], dict[str, Any]]:
    """The project directory, the SARIF log and the JSON report of one real run."""
    project = tmp_path_factory.mktemp("project")
    (project / "src").mkdir()
    (project / "src" / "train.py").write_text(SCRIPT)
    (project / "out").mkdir()
    done = _run(
        "diagnose",
        "--sarif",
        "out/report.sarif",
        "--json",
        "report.json",
        "src/train.py",
        cwd=project,
    )
    assert done.returncode == 1, done.stderr  # the script's own status: backward raised
    sarif = json.loads((project / "out" / "report.sarif").read_text(encoding="utf-8"))
    report = json.loads((project / "report.json").read_text(encoding="utf-8"))
    return project, sarif, report


def test_the_log_of_a_real_run_validates_against_the_sarif_schema(diagnosed) -> None:  # type: ignore[no-untyped-def]
    _, sarif, _ = diagnosed
    assert _errors(sarif) == []
    assert sarif["version"] == "2.1.0" and sarif["$schema"] == SARIF_SCHEMA
    (run,) = sarif["runs"]
    driver = run["tool"]["driver"]
    assert (driver["name"], driver["version"]) == ("gradprobe", gradprobe.__version__)


def test_one_rule_per_code_with_its_page_as_help(diagnosed) -> None:  # type: ignore[no-untyped-def]
    _, sarif, _ = diagnosed
    rules = sarif["runs"][0]["tool"]["driver"]["rules"]
    assert [rule["id"] for rule in rules] == [code for code in CODES if code.startswith("GP")]
    for rule in rules:
        entry = CODES[rule["id"]]
        page = _pages.page(rule["id"])
        assert page is not None
        assert rule["name"] == entry.kind
        assert rule["shortDescription"]["text"].lower() == entry.title.lower()
        assert rule["fullDescription"]["text"] == entry.explanation
        assert rule["help"]["markdown"] == page
        assert "**Fix:**" in rule["help"]["text"] and "../findings.md" not in rule["help"]["text"]
        assert rule["properties"]["docs"] == f"findings/{rule['id'].lower()}.md"


def test_one_result_per_finding_with_the_cause_first_and_every_location_related(diagnosed) -> None:  # type: ignore[no-untyped-def]
    project, sarif, report = diagnosed
    run = sarif["runs"][0]
    results, findings = run["results"], report["findings"]
    assert [r["ruleId"] for r in results] == [f["code"] for f in findings]
    assert {f["code"] for f in findings} >= {"GP101", "GP106"}
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == project.resolve().as_uri() + "/"
    rules = run["tool"]["driver"]["rules"]
    for result, finding in zip(results, findings, strict=True):
        assert rules[result["ruleIndex"]]["id"] == finding["code"]
        assert result["message"]["text"].startswith(finding["title"][:1].upper())
        assert finding["message"] in result["message"]["text"]
        assert result["properties"]["docs"] == finding["docs"]
        (primary,) = result["locations"]
        cause = next(loc for loc in finding["locations"] if loc["role"] == "cause")
        physical = primary["physicalLocation"]
        assert physical["artifactLocation"] == {"uri": "src/train.py", "uriBaseId": "%SRCROOT%"}
        assert physical["region"]["startLine"] == cause["line"]
        assert physical["region"]["snippet"]["text"] == cause["text"]
        related = result["relatedLocations"]
        assert [r["id"] for r in related] == list(range(1, len(finding["locations"]) + 1))
        for where, location in zip(related, finding["locations"], strict=True):
            assert where["physicalLocation"]["region"]["startLine"] == location["line"]
            assert where["message"]["text"].startswith(
                {
                    "cause": "cause",
                    "created": "created",
                    "saved": "autograd saved",
                    "error": "PyTorch raised",
                    "read": "the value was read",
                    "registered": "the hook was registered",
                }[location["role"]]
            )
    lines = SCRIPT.splitlines()
    gp101 = results[[f["code"] for f in findings].index("GP101")]
    cause_line = gp101["locations"][0]["physicalLocation"]["region"]["startLine"]
    assert lines[cause_line - 1].strip() == "y.mul_(2)"
    assert gp101["locations"][0]["logicalLocations"] == [{"name": "forward", "kind": "function"}]
    # the script died at one of GP101's lines; GP106's .grad read did not stop it
    assert gp101["level"] == "error"
    assert results[[f["code"] for f in findings].index("GP106")]["level"] == "warning"
    invocation = run["invocations"][0]
    assert invocation["exitCode"] == 1
    assert invocation["exitCodeDescription"].startswith("RuntimeError: one of the variables")


def _finding(*locations: Location) -> Diagnosis:
    return Diagnosis(
        "/work/project/train.py",
        ("--epochs", "1"),
        0,
        None,
        (make_finding("GP107", parameter="fc.weight", locations=list(locations)),),
    )


def test_paths_outside_the_root_and_names_that_are_no_path_still_validate() -> None:
    log = sarif_log(
        _finding(
            Location("/usr/lib/python3/site-packages/lib.py", 7, "created", function="f"),
            Location("/tmp/<notebook-cell>", 3, "read"),
            Location("<string>", 1, "saved"),
            Location("/work/project/a b/ü.py", 2, "cause", text="x = w.detach()"),
        ),
        root="/work/project",
    )
    assert _errors(log) == []
    (result,) = log["runs"][0]["results"]
    uris = [r["physicalLocation"]["artifactLocation"] for r in result["relatedLocations"]]
    assert uris == [
        {"uri": "file:///usr/lib/python3/site-packages/lib.py"},
        {"uri": "file:///tmp/%3Cnotebook-cell%3E"},
        {"uri": "%3Cstring%3E"},
        {"uri": "a%20b/%C3%BC.py", "uriBaseId": "%SRCROOT%"},
    ]
    assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == 2  # the cause


def test_without_a_cause_the_first_location_is_primary_and_without_any_the_script() -> None:
    first = Location("/work/project/train.py", 9, "read")
    log = sarif_log(
        _finding(first, Location("/work/project/train.py", 4, "created")), root="/work/project"
    )
    region = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]
    assert region["startLine"] == 9
    bare = sarif_log(_finding(), root="/work/project")
    assert _errors(bare) == []
    (result,) = bare["runs"][0]["results"]
    assert result["locations"] == [
        {"physicalLocation": {"artifactLocation": {"uri": "train.py", "uriBaseId": "%SRCROOT%"}}}
    ]
    assert "relatedLocations" not in result
    assert result["properties"]["parameter"] == "fc.weight"


def test_the_fingerprint_follows_the_code_not_its_line_number() -> None:
    def cause(line: int, text: str = "h = h + x") -> Diagnosis:
        return _finding(
            Location("/work/project/train.py", line, "cause", function="step", text=text)
        )

    def print_of(run: Diagnosis) -> str:
        result = sarif_log(run, root="/work/project")["runs"][0]["results"][0]
        return str(result["partialFingerprints"]["gradprobe/v1"])

    assert print_of(cause(10)) == print_of(cause(14))
    assert print_of(cause(10)) != print_of(cause(10, "h = h.detach() + x"))


def test_the_validation_is_real_a_broken_log_fails_it() -> None:
    log = sarif_log(_finding(Location("/work/project/train.py", 3, "cause")), root="/work/project")
    assert _errors(log) == []
    no_version = {key: value for key, value in log.items() if key != "version"}
    assert any("'version' is a required property" in e for e in _errors(no_version))
    spaced = json.loads(json.dumps(log))
    spaced["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"][
        "uri"
    ] = "src/my train.py"
    assert any("uri-reference" in e for e in _errors(spaced))
    zero = json.loads(json.dumps(log))
    zero["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] = 0
    assert _errors(zero)


def test_a_clean_run_is_a_valid_log_with_no_results(tmp_path: Path) -> None:
    (tmp_path / "fine.py").write_text("print('fine')\n")
    assert diagnose(tmp_path / "fine.py", sarif_path=tmp_path / "r.sarif") == 0
    log = json.loads((tmp_path / "r.sarif").read_text(encoding="utf-8"))
    assert _errors(log) == []
    assert log["runs"][0]["results"] == []
    assert log["runs"][0]["invocations"][0]["exitCode"] == 0


@pytest.mark.filterwarnings("ignore:The .grad attribute of a Tensor that is not a leaf")
@pytest.mark.parametrize("git", ["folder", "file"], ids=["repository", "worktree"])
def test_paths_are_relative_to_the_git_work_tree_around_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, git: str
) -> None:
    repo = tmp_path / "repo"
    (repo / "train").mkdir(parents=True)
    if git == "folder":
        (repo / ".git").mkdir()
    else:  # a worktree's .git is a file naming the real one
        (repo / ".git").write_text("gitdir: /elsewhere/.git/worktrees/repo\n")
    (repo / "train" / "step.py").write_text(
        "import torch\n"
        "probe = torch.ones(3, requires_grad=True).double()\n"
        "(probe * 2).sum().backward()\n"
        "print(probe.grad)\n"
    )
    monkeypatch.chdir(repo / "train")  # run from a subdirectory, as `cd train && ...` would
    assert diagnose("step.py", sarif_path="r.sarif") == 0
    log = json.loads((repo / "train" / "r.sarif").read_text(encoding="utf-8"))
    assert _errors(log) == []
    run = log["runs"][0]
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == repo.resolve().as_uri() + "/"
    (result,) = run["results"]
    assert result["ruleId"] == "GP106"  # .grad of a non-leaf
    artifact = result["locations"][0]["physicalLocation"]["artifactLocation"]
    assert artifact == {"uri": "train/step.py", "uriBaseId": "%SRCROOT%"}


def test_write_sarif_returns_its_path(tmp_path: Path) -> None:
    written = write_sarif(_finding(), tmp_path / "x.sarif", root="/work/project")
    assert written == tmp_path / "x.sarif"
    assert json.loads(written.read_text(encoding="utf-8"))["version"] == "2.1.0"


# -- the path is checked before the script runs ------------------------------------------------

_MARKING = 'import pathlib\npathlib.Path(__file__).with_name("ran").write_text("yes")\n'


@pytest.mark.parametrize(
    ("path", "problem"),
    [
        ("/no/such/dir/r.sarif", "the directory /no/such/dir does not exist"),
        (".", "'.' is a directory; give a file name inside it"),
        ("script.py/r.sarif", "script.py is not a directory"),
    ],
    ids=["missing-directory", "a-directory", "below-a-file"],
)
def test_an_unwritable_sarif_path_is_one_line_and_nothing_runs(
    tmp_path: Path, path: str, problem: str
) -> None:
    (tmp_path / "script.py").write_text(_MARKING)
    done = _run("diagnose", "--sarif", path, "script.py", cwd=tmp_path)
    assert done.returncode == 2
    assert not (tmp_path / "ran").exists()
    assert done.stderr == (
        f"gradprobe diagnose: cannot write --sarif {path}: {problem}; nothing was run.\n"
    )
    assert done.stdout == ""


def test_the_diagnose_function_checks_its_sarif_path_before_running(tmp_path: Path) -> None:
    (tmp_path / "script.py").write_text(_MARKING)
    with pytest.raises(
        GradprobeValueError, match=r"SARIF report .* does not exist; nothing was run"
    ):
        diagnose(tmp_path / "script.py", sarif_path=tmp_path / "missing" / "r.sarif")
    assert not (tmp_path / "ran").exists()


def test_a_sarif_path_after_the_script_goes_to_it_with_a_warning(tmp_path: Path) -> None:
    (tmp_path / "script.py").write_text(_MARKING)
    done = _run("diagnose", "script.py", "--sarif", "r.sarif", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "r.sarif").exists()
    assert "warning: --sarif comes after the script name" in done.stderr


# -- a plug-in's code ----------------------------------------------------------------------------


def test_a_plugin_code_is_a_rule_whose_help_is_its_url(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    shutil.copy(EXAMPLES / "acme_checks" / "acme_checks.py", site / "acme_checks.py")
    info = site / "acme_checks-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-checks\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        textwrap.dedent("[gradprobe.checks]\nzero_lr = acme_checks:ZeroLearningRate\n")
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), _SRC, *sys.path])}
    script = EXAMPLES / "acme_checks" / "train_zero_lr.py"
    done = _run("diagnose", "--sarif", "r.sarif", str(script), cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    log = json.loads((tmp_path / "r.sarif").read_text(encoding="utf-8"))
    assert _errors(log) == []
    run = log["runs"][0]
    (result,) = run["results"]
    rule = run["tool"]["driver"]["rules"][result["ruleIndex"]]
    assert rule["id"] == result["ruleId"] == "ACME101"
    assert (
        rule["helpUri"].startswith("https://") and rule["helpUri"] == result["properties"]["docs"]
    )
    assert "Fix:" in rule["help"]["text"]
    # the example lives outside the working directory: an absolute file URI
    uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == script.resolve().as_uri()
