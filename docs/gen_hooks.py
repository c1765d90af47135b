"""Real output for docs/hooks.md: the two hook examples, and the legacy-vs-full table.

``blocks()`` imports ``examples/hooks_inspect.py`` and ``examples/hook_timeline.py`` and
runs their ``main`` with a recording console (width 88, no colour), and builds a Markdown
table from :func:`gradprobe.hooks.explain` on a few modules. Everything is seeded, and the
tables show file names only, so the text is the same on every machine.
"""

from __future__ import annotations

import importlib.util
import io
import sys
from pathlib import Path
from types import ModuleType

import torch
from rich.console import Console
from torch import nn

from gradprobe.hooks import GradSlot, HookLayout, explain

WIDTH = 88
EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _example(name: str) -> ModuleType:
    path = EXAMPLES / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"docs_example_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _run(name: str) -> str:
    console = Console(width=WIDTH, record=True, color_system=None, file=io.StringIO())
    _example(name).main(console)
    text = "\n".join(line.rstrip() for line in console.export_text().splitlines())
    return f"```text\n{text.strip()}\n```\n"


def _cell(slots: tuple[GradSlot, ...], fired: bool, error: str | None) -> str:
    if error is not None:
        return "the forward fails"
    if not fired:
        return "never called"
    parts = ["None" if s.shape is None else f"{s.label} `{tuple(s.shape)}`" for s in slots]
    return "<br>".join(parts)


def _row(title: str, layout: HookLayout) -> str:
    inputs = ", ".join("–" if s is None else f"`{tuple(s)}`" for s in layout.input_shapes)
    legacy = _cell(layout.legacy_grad_input, layout.legacy_fired, layout.legacy_error)
    if layout.legacy_fired and not layout.legacy_complete:
        legacy += "<br>**last operation only**"
    full = _cell(layout.full_grad_input, layout.full_fired, layout.full_error)
    return f"| {title} | {inputs} | `{layout.node}` | {legacy} | {full} |"


def comparison() -> str:
    """The legacy-vs-full table, from explain() on each module."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        cases = [
            ("`nn.Linear(3, 5)`", explain(nn.Linear(3, 5))),
            (
                "`nn.Linear(3, 5)`, 3-D input",
                explain(nn.Linear(3, 5), torch.randn(4, 7, 3, requires_grad=True)),
            ),
            (
                "`nn.Linear(3, 5)`, input without grad",
                explain(nn.Linear(3, 5), torch.randn(4, 3)),
            ),
            ("`nn.Linear(3, 5, bias=False)`", explain(nn.Linear(3, 5, bias=False))),
            ("`nn.Conv2d(2, 4, 3)`", explain(nn.Conv2d(2, 4, 3))),
            ("`nn.Conv1d(2, 4, 3, bias=False)`", explain(nn.Conv1d(2, 4, 3, bias=False))),
            (
                "`nn.Sequential(Linear(4, 6), ReLU(), Linear(6, 2))`",
                explain(
                    nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 2)),
                    torch.randn(3, 4, requires_grad=True),
                ),
            ),
            (
                "`nn.Sequential(Linear(4, 6), ReLU())`",
                explain(
                    nn.Sequential(nn.Linear(4, 6), nn.ReLU()),
                    torch.randn(3, 4, requires_grad=True),
                ),
            ),
            (
                "`nn.ReLU(inplace=True)`",
                explain(nn.ReLU(inplace=True), torch.randn(3, 4, requires_grad=True)),
            ),
        ]
    lines = [
        "| module | input | legacy hook on | legacy `grad_input` | full `grad_input` |",
        "|---|---|---|---|---|",
        *(_row(title, layout) for title, layout in cases),
    ]
    return "\n".join(lines) + "\n"


def blocks() -> dict[str, str]:
    """Marker name -> generated Markdown body."""
    return {
        "hooks-inspect": _run("hooks_inspect"),
        "hooks-timeline": _run("hook_timeline"),
        "hooks-legacy-vs-full": comparison(),
    }


if __name__ == "__main__":
    for name, body in blocks().items():
        print(f"<!-- {name} -->\n{body}")
