"""docs/notebooks.md: how a finding names a notebook cell, from a notebook run by a real
Jupyter kernel (nbclient) of this interpreter."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

CELLS = (
    "import torch, gradprobe",
    "layer = torch.nn.Linear(3, 3)\nx = torch.ones(2, 3)",
    (
        "with gradprobe.record() as rec:\n"
        "    y = layer(x).sigmoid()\n"
        "    y.mul_(2)\n"
        "    try:\n"
        "        y.sum().backward()\n"
        "    except RuntimeError:\n"
        "        pass"
    ),
    "print(rec)",
)


def cell_lines() -> str:
    """The cause and error locations ``print(rec)`` shows for the in-place bug of cell 3."""
    import nbclient
    import nbformat

    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in CELLS]
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp)
        spec = where / "jupyter" / "kernels" / "gradprobe-docs"
        spec.mkdir(parents=True)
        argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
        kernel = {"argv": argv, "display_name": "gradprobe docs", "language": "python"}
        (spec / "kernel.json").write_text(json.dumps(kernel), encoding="utf-8")
        saved = {name: os.environ.get(name) for name in ("JUPYTER_PATH", "IPYTHONDIR", "COLUMNS")}
        os.environ.update(
            JUPYTER_PATH=str(where / "jupyter"), IPYTHONDIR=str(where / "ipython"), COLUMNS="88"
        )
        try:
            nbclient.NotebookClient(
                notebook,
                timeout=300,
                kernel_name="gradprobe-docs",
                resources={"metadata": {"path": tmp}},
            ).execute()
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
    printed = "".join(out.get("text", "") for out in notebook.cells[-1].outputs)
    lines = printed.splitlines()
    keep: list[str] = []
    for i, line in enumerate(lines):
        if line.strip().startswith(("cause", "saved", "error")) and "In [" in line:
            keep.extend((line.rstrip(), lines[i + 1].rstrip()))
    return "\n".join(keep) + "\n"


def blocks() -> dict[str, str]:
    return {"notebook-cell-lines": f"```text\n{cell_lines()}```\n"}
