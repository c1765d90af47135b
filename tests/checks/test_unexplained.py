"""GP168: an error no other check explains still gets a finding, with the line to change
read from the traceback's shape; errors that end threads the recorded code started are
explained from their text and said to come from an unrecorded thread."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from gradprobe.diagnose import diagnose_script
from gradprobe.findings import Finding

# the thread's error also reaches pytest's own excepthook, which gradprobe passes it on to
_THREAD_WARNING = pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")


def _run(tmp_path: Path, source: str) -> tuple[list[Finding], Path]:
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(source))
    result = diagnose_script(script)
    assert result.error is not None or result.findings, "the script was meant to fail"
    return list(result.findings), script


def _lines(finding: Finding, role: str) -> list[int]:
    return [loc.line for loc in finding.locations if loc.role == role]


def test_a_torch_call_that_refuses_its_arguments_is_the_cause(tmp_path: Path) -> None:
    findings, _ = _run(
        tmp_path,
        """\
        import torch
        w = torch.randn(4, 3, requires_grad=True)
        x = torch.randn(2, 4)
        out = torch.mm(x, w.t())
        out.sum().backward()
        """,
    )
    [finding] = findings
    assert finding.code == "GP168"
    assert _lines(finding, "cause") == [4]
    assert "RuntimeError" in finding.message


def test_code_backward_ran_is_the_cause_and_the_backward_the_error(tmp_path: Path) -> None:
    findings, _ = _run(
        tmp_path,
        """\
        import torch

        class Clip(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clamp(-1, 1)

            @staticmethod
            def backward(ctx, g):
                return g.view(-1, 5)

        x = torch.randn(4, 3, requires_grad=True)
        Clip.apply(x).sum().backward()
        """,
    )
    [finding] = [f for f in findings if f.code == "GP168"]
    assert _lines(finding, "cause") == [10]
    assert _lines(finding, "error") == [13]


def test_the_users_own_raise_is_left_to_the_user(tmp_path: Path) -> None:
    """Their own check fired: diagnose says no autograd problem is behind it."""
    script = tmp_path / "script.py"
    script.write_text(
        "import torch\n"
        "loss = torch.tensor(float('nan'))\n"
        "if torch.isnan(loss):\n"
        "    raise ValueError('loss is nan')\n"
    )
    result = diagnose_script(script)
    assert result.exit_code == 1
    assert result.findings == ()


def test_an_engine_error_names_the_line_that_made_the_node_in_its_text(tmp_path: Path) -> None:
    findings, _ = _run(
        tmp_path,
        """\
        import torch
        x = torch.randn(3, requires_grad=True)
        y = torch.special.zeta(x, torch.full((3,), 2.0))
        y.sum().backward()
        """,
    )
    [finding] = [f for f in findings if f.code == "GP168"]
    assert "not implemented" in finding.message
    assert _lines(finding, "error") == [4]


def test_an_explained_error_gets_no_second_finding(tmp_path: Path) -> None:
    findings, _ = _run(
        tmp_path,
        """\
        import torch
        x = torch.randn(3, requires_grad=True)
        y = (x * 2).sum()
        y.backward()
        y.backward()
        """,
    )
    assert [f.code for f in findings] == ["GP103"]


@_THREAD_WARNING
def test_an_error_that_ends_a_thread_is_reported_as_unrecorded(tmp_path: Path) -> None:
    findings, _ = _run(
        tmp_path,
        """\
        import threading
        import torch

        def work():
            x = torch.randn(3, requires_grad=True)
            y = x.sigmoid()
            y.mul_(2)
            y.sum().backward()

        thread = threading.Thread(target=work, name="trainer")
        thread.start()
        thread.join()
        """,
    )
    [finding] = findings
    assert finding.code == "GP101"
    assert "'trainer', which gradprobe did not record" in finding.message
    assert _lines(finding, "error") == [8]


def test_the_thread_hook_is_put_back(tmp_path: Path) -> None:
    import threading

    before = threading.excepthook
    _run(tmp_path, "raise RuntimeError('plain')\n")
    assert threading.excepthook is before


@_THREAD_WARNING
@pytest.mark.parametrize("in_thread", [False, True])
def test_an_exception_whose_str_raises_still_gets_a_finding(
    tmp_path: Path, in_thread: bool
) -> None:
    body = "raise Odd()"
    if in_thread:
        body = (
            "t = threading.Thread(target=lambda: (_ for _ in ()).throw(Odd()))\nt.start(); t.join()"
        )
    script = tmp_path / "script.py"
    script.write_text(
        "import threading\n"
        "class Odd(Exception):\n"
        "    def __str__(self):\n"
        "        raise KeyError('no text')\n" + body + "\n"
    )
    findings = list(diagnose_script(script).findings)
    assert not [f for f in findings if f.code == "GP199"]  # str() is never taken raw
    if in_thread:  # a thread's error is reported, the thread said to be unrecorded
        [finding] = [f for f in findings if f.code == "GP168"]
        assert "Odd" in finding.message


def test_gradprobes_own_errors_are_not_explained_again(tmp_path: Path) -> None:
    """A GradprobeError says what was wrong itself (bad input, a failed gradprobe
    assertion with its findings): no GP168 repeats it."""
    script = tmp_path / "script.py"
    script.write_text("import gradprobe\ngradprobe.trace('not a tensor')\n")
    result = diagnose_script(script)
    assert result.exit_code == 1
    assert [f.code for f in result.findings] == []


def test_an_error_reporting_another_process_failure_is_left_to_that_process() -> None:
    import torch

    from gradprobe.checks.unexplained import _reported_elsewhere

    assert _reported_elsewhere(torch.distributed.DistBackendError("Connection closed by peer"))
    assert not _reported_elsewhere(RuntimeError("Connection closed by peer"))
