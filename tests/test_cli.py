"""The gradprobe command: --version, the demo, and user mistakes, run as a user would."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import gradprobe
from gradprobe import demo
from gradprobe.cli import main
from gradprobe.diagnose import diagnose
from gradprobe.errors import GradprobeValueError

# the gradprobe this test session imported, whatever is installed
_SRC = str(Path(gradprobe.__file__).resolve().parent.parent)

# A script that leaves a mark when it runs, and prints the arguments it was given.
_MARKING = """\
import pathlib, sys
pathlib.Path(__file__).with_name("ran").write_text(" ".join(sys.argv[1:]))
"""


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gradprobe", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={"COLUMNS": "100", "PATH": "/usr/bin:/bin", "HOME": str(cwd), "PYTHONPATH": _SRC},
        check=False,
    )


def test_version(tmp_path: Path) -> None:
    done = _run("--version", cwd=tmp_path)
    assert done.returncode == 0
    assert done.stdout.strip() == f"gradprobe {gradprobe.__version__}"


def test_demo_explains_the_detached_features_and_writes_svg(tmp_path: Path) -> None:
    done = _run("demo", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "4 of 6 parameters got no gradient" in out
    assert "features.0.weight, features.0.bias, features.2.weight, features.2.bias" in out
    assert "not in the traced graph" in out
    assert "root           loss scalar float32 ← NllLossBackward0" in out
    # record() names the line that cut the graph: the .detach() in forward
    assert "GP107 parameter_without_grad" in out
    detach_line = next(
        n
        for n, line in enumerate(Path(demo.__file__).read_text().splitlines(), start=1)
        if "features.detach()" in line
    )
    assert f"cause      demo.py:{detach_line} in forward" in out
    svg = tmp_path / "gradprobe-demo.svg"
    assert f"graph written to {svg.name}" in out
    root = ET.fromstring(svg.read_text())
    texts = " ".join(t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text"))
    assert "head.weight" in texts


def test_no_command_prints_help_and_fails(capsys: object) -> None:
    assert main([]) == 2


@pytest.mark.parametrize(
    ("path", "problem"),
    [
        ("/no/such/dir/r.json", "the directory /no/such/dir does not exist"),
        (".", "'.' is a directory; give a file name inside it"),
        ("script.py/r.json", "script.py is not a directory"),
    ],
    ids=["missing-directory", "a-directory", "below-a-file"],
)
def test_diagnose_refuses_an_unwritable_json_path_before_running_the_script(
    tmp_path: Path, path: str, problem: str
) -> None:
    (tmp_path / "script.py").write_text(_MARKING)
    done = _run("diagnose", "--json", path, "script.py", cwd=tmp_path)
    assert done.returncode == 2
    assert not (tmp_path / "ran").exists()  # the script never ran
    assert (
        done.stderr
        == f"gradprobe diagnose: cannot write --json {path}: {problem}; nothing was run.\n"
    )
    assert "Traceback" not in done.stderr and done.stdout == ""


def test_diagnose_function_checks_its_json_path_before_running(tmp_path: Path) -> None:
    (tmp_path / "script.py").write_text(_MARKING)
    with pytest.raises(GradprobeValueError, match="does not exist; nothing was run"):
        diagnose(tmp_path / "script.py", json_path=tmp_path / "missing" / "r.json")
    assert not (tmp_path / "ran").exists()


def test_a_json_path_that_vanishes_during_the_run_is_one_line_not_a_traceback(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (tmp_path / "script.py").write_text(f"import shutil\nshutil.rmtree({str(out)!r})\n")
    done = _run("diagnose", "--json", "out/r.json", "script.py", cwd=tmp_path)
    assert done.returncode == 2  # the script succeeded, the report could not be written
    assert "Traceback" not in done.stderr
    assert "gradprobe diagnose: could not write the JSON report to 'out/r.json': No such file" in (
        done.stderr
    )


def test_gradprobe_options_after_the_script_go_to_it_with_a_warning(tmp_path: Path) -> None:
    (tmp_path / "script.py").write_text(_MARKING)
    done = _run("diagnose", "script.py", "--epochs", "1", "--json=out.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "ran").read_text() == "--epochs 1 --json=out.json"  # as python would
    assert not (tmp_path / "out.json").exists()
    warning = (
        "gradprobe diagnose: warning: --json comes after the script name, so it went to "
        "script.py, not to gradprobe; put gradprobe's options before it"
    )
    assert warning in done.stderr
    quiet = _run("diagnose", "script.py", "--epochs", "1", cwd=tmp_path)
    assert "warning" not in quiet.stderr


def test_a_missing_script_is_one_line(tmp_path: Path) -> None:
    done = _run("diagnose", "nosuch.py", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("gradprobe diagnose: 'nosuch.py' is not a file.")
    assert done.stderr.count("\n") == 1


def test_demo_refuses_an_unwritable_svg_path_before_running(tmp_path: Path) -> None:
    done = _run("demo", "--svg", "/no/such/dir/demo.svg", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stdout == ""  # nothing traced or printed
    assert done.stderr == (
        "gradprobe demo: cannot write --svg /no/such/dir/demo.svg: the directory /no/such/dir "
        "does not exist; nothing was run.\n"
    )


@pytest.mark.parametrize(
    ("directory", "problem"),
    [
        ("script.py", "script.py is a file, not a directory"),
        ("script.py/pictures", "script.py is a file, so script.py/pictures cannot be made"),
    ],
    ids=["a-file", "below-a-file"],
)
def test_diagnose_refuses_an_unusable_svg_directory_before_running_the_script(
    tmp_path: Path, directory: str, problem: str
) -> None:
    (tmp_path / "script.py").write_text(_MARKING)
    done = _run("diagnose", "--svg", directory, "script.py", cwd=tmp_path)
    assert done.returncode == 2
    assert not (tmp_path / "ran").exists()
    assert done.stderr == (
        f"gradprobe diagnose: cannot write --svg {directory}: {problem}; nothing was run.\n"
    )
    # a directory still to be made is fine: made when the pictures are written
    fine = _run("diagnose", "--svg", "new/pictures", "script.py", cwd=tmp_path)
    assert fine.returncode == 0, fine.stderr
    assert (tmp_path / "ran").exists() and (tmp_path / "new" / "pictures").is_dir()
