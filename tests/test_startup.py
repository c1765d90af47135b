"""What starting gradprobe costs: the command line's help without torch, the package without
dynamo (or matplotlib, hypothesis, pytest), each checked in a fresh interpreter."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import gradprobe

# the gradprobe this test session imported, whatever is installed
_SRC = str(Path(gradprobe.__file__).resolve().parent.parent)


def _python(code: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": _SRC, "COLUMNS": "100"}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        check=False,
    )


@pytest.mark.parametrize(
    "start",
    [
        "from gradprobe.cli import main; main(ARGS)",  # the `gradprobe` console script
        "import runpy; sys.argv[1:] = ARGS; runpy.run_module('gradprobe', run_name='__main__')",
    ],
    ids=["gradprobe", "python -m gradprobe"],
)
@pytest.mark.parametrize(
    "args",
    [["--help"], ["--version"], ["diagnose", "--help"], ["demo", "--help"]],
    ids=["help", "version", "diagnose-help", "demo-help"],
)
def test_help_and_version_answer_without_importing_torch(start: str, args: list[str]) -> None:
    done = _python(
        f"""
        import sys
        try:
            {start.replace("ARGS", repr(args))}
        except SystemExit as exit:
            assert exit.code in (0, None), exit.code
        print("torch imported:", "torch" in sys.modules)
        """
    )
    assert done.returncode == 0, done.stderr
    assert "gradprobe" in done.stdout
    assert done.stdout.splitlines()[-1] == "torch imported: False"


def test_the_public_names_import_no_dynamo_and_no_optional_dependency() -> None:
    done = _python(
        """
        import sys
        import gradprobe
        assert "torch" not in sys.modules
        for name in gradprobe.__all__:
            getattr(gradprobe, name)
        gradprobe.hooks
        heavy = ("torch._dynamo", "matplotlib", "hypothesis", "pytest", "tensorboard")
        print(sorted(name for name in heavy if name in sys.modules))
        """
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_compiling_inside_a_recording_in_a_process_without_dynamo_runs_the_recorder_eagerly() -> (
    None
):
    # The recorder's __torch_function__ gets its dynamo.disable wrapper when a recording
    # starts, since `import gradprobe` no longer imports dynamo.
    done = _python(
        """
        import sys
        import torch
        from torch import nn
        import gradprobe
        from gradprobe._recorder import RecorderMode

        assert "torch._dynamo" not in sys.modules
        with gradprobe.record() as recording:
            wrapped = RecorderMode.__dict__["__torch_function__"]
            assert getattr(wrapped, "_torchdynamo_disable", False)
            model = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
            compiled = torch.compile(model, backend="eager")
            assert torch.equal(compiled(torch.ones(2, 4)), model(torch.ones(2, 4)))
            compiled(torch.ones(2, 4)).sum().backward()
        print([finding.code for finding in recording.findings], [n.code for n in recording.notes])
        """
    )
    assert done.returncode == 0, done.stderr
    # nothing wrong; the note GP503 only says the compiled model was observed op by op
    assert done.stdout.strip() == "[] ['GP503']"
