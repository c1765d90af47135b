"""docs/watch.md: the real output of ``examples/watch_nan.py`` and of a small session."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WIDTH = 88


def _relative(text: str) -> str:
    return text.replace(str(ROOT) + os.sep, "")


def example_output() -> str:
    env = {**os.environ, "COLUMNS": str(WIDTH), "NO_COLOR": "1", "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "examples/watch_nan.py"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    lines = [line.rstrip() for line in _relative(done.stdout).splitlines()]
    return "\n".join(lines) + "\n"


def rounded(value: object) -> object:
    """Floats to 6 significant digits: the last bits of a float32 sum differ between CPUs
    (vector widths), and the pages must come out the same on every machine."""
    if isinstance(value, float):
        return float(f"{value:.6g}")
    if isinstance(value, dict):
        return {key: rounded(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(rounded(item) for item in value)
    return value


def small_session() -> tuple[str, str]:
    """``gradient_flow()`` and one history record of a three-layer MLP, as text."""
    import torch
    from rich.console import Console
    from torch import nn

    from gradprobe._watch import watch

    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    with watch(model, sample_every=2) as session:
        for _ in range(3):
            model.zero_grad()
            model(torch.randn(16, 4)).pow(2).mean().backward()
    console = Console(width=WIDTH, record=True, color_system=None, file=io.StringIO())
    console.print(rounded(session.gradient_flow()))
    flow = "\n".join(line.rstrip() for line in console.export_text().splitlines())
    record = rounded(session.to_dict()["history"][2])
    assert isinstance(record, dict)
    record["activations"] = record["activations"][:2]
    record["gradients"] = record["gradients"][:2]
    text = json.dumps(record, indent=2)
    # Shapes on one line: [16, 4] rather than one number per line.
    text = re.sub(
        r"\[\s+([\d,\s]+?)\s+\]",
        lambda m: "[" + ", ".join(m[1].split()).replace(",,", ",") + "]",
        text,
    )
    return flow + "\n", text + "\n"


def blocks() -> dict[str, str]:
    flow, record = small_session()
    return {
        "watch-example": f"```text\n{example_output()}```\n",
        "watch-flow": f"```text\n{flow}```\n",
        "watch-record": f"```json\n{record}```\n",
    }
