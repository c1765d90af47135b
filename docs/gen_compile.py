"""docs/compile.md: hooks under torch.compile measured on this torch, and the real output of
``examples/compile_hooks.py`` (plain and under ``gradprobe diagnose``), of
``examples/compile_trace.py`` and of ``watch()`` on a compiled model.

The measurements run in fresh interpreters (``python docs/gen_compile.py --hooks`` and
``--watch``), so dynamo's caches never leak between them or into the docs build.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
WIDTH = "88"
BACKENDS = ("eager", "aot_eager")
KINDS = (
    "forward pre hook",
    "forward hook",
    "full backward pre hook",
    "full backward hook",
    "parameter tensor hook",
    "post-accumulate-grad hook",
)
SVG = "compile-trace.svg"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": WIDTH, "NO_COLOR": "1", "TERM": "dumb", "OMP_NUM_THREADS": "1"}
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, check=False
    )


def _relative(text: str) -> str:
    return text.replace(str(ROOT) + os.sep, "")


def _lines(text: str) -> str:
    return "\n".join(line.rstrip() for line in _relative(text).splitlines()) + "\n"


# -- measurements (run in a fresh interpreter) --------------------------------------------------


def _register(net: Any, kind: str, calls: list[str]) -> None:
    def note(*_: object) -> None:
        calls.append(kind)

    layer = net[0]
    if kind == "forward pre hook":
        layer.register_forward_pre_hook(note)
    elif kind == "forward hook":
        layer.register_forward_hook(note)
    elif kind == "full backward pre hook":
        layer.register_full_backward_pre_hook(note)
    elif kind == "full backward hook":
        layer.register_full_backward_hook(note)
    elif kind == "parameter tensor hook":
        layer.weight.register_hook(note)
    else:
        layer.weight.register_post_accumulate_grad_hook(note)


def measure_hooks() -> dict[str, dict[str, list[bool]]]:
    """backend -> hook kind -> [called when registered before the first call, called when
    registered after it, called after that plus torch._dynamo.reset()]."""
    import torch
    import torch._dynamo
    from torch import nn

    torch.manual_seed(0)
    results: dict[str, dict[str, list[bool]]] = {}
    for backend in BACKENDS:
        results[backend] = {}
        for kind in KINDS:
            row = []
            for late in (False, True):
                torch._dynamo.reset()
                net = nn.Sequential(nn.Linear(4, 5), nn.ReLU(), nn.Linear(5, 2))
                model = torch.compile(net, backend=backend)
                x = torch.randn(3, 4, requires_grad=True)
                calls: list[str] = []
                if not late:
                    _register(net, kind, calls)
                model(x).sum().backward()
                if late:
                    calls.clear()
                    _register(net, kind, calls)
                    model(x).sum().backward()
                row.append(bool(calls))
                if late:
                    calls.clear()
                    torch._dynamo.reset()
                    model(x).sum().backward()
                    row.append(bool(calls))
            results[backend][kind] = row
    return results


def measure_watch() -> dict[str, Any]:
    """watch() entered before and after the first compiled call: what it recorded, and how
    many graphs dynamo made."""
    import warnings

    import torch
    import torch._dynamo
    from torch import nn
    from torch._dynamo.utils import counters

    import gradprobe

    found: dict[str, Any] = {}
    for when in ("before", "after"):
        torch._dynamo.reset()
        counters.clear()
        torch.manual_seed(0)
        net = nn.Sequential(nn.Linear(4, 5), nn.ReLU(), nn.Linear(5, 2))
        model = torch.compile(net, backend="aot_eager")
        x = torch.randn(8, 4)
        if when == "after":
            model(x).sum().backward()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with gradprobe.watch(net, sample_every=1) as session:
                for _ in range(3):
                    net.zero_grad()
                    model(x).sum().backward()
        last = session.history[-1]
        found[when] = {
            "activations": [r.module for r in last.activations if r.module != "(input)"],
            "outputs": sorted({r.name for r in last.gradients if r.kind == "output"}),
            "parameters": sorted({r.name for r in last.gradients if r.kind == "parameter"}),
            "graphs": int(counters["stats"]["unique_graphs"]),
            "warnings": [str(w.message) for w in caught],
        }
    return found


# -- the page's blocks ----------------------------------------------------------------------------


def _measured(flag: str) -> Any:
    done = _run(str(Path(__file__).relative_to(ROOT)), flag)
    if done.returncode != 0:
        raise RuntimeError(f"docs/gen_compile.py {flag} failed:\n{done.stderr}")
    return json.loads(done.stdout.splitlines()[-1])


def hooks_table() -> str:
    results = _measured("--hooks")
    head = (
        "| hook on `model[0]` | backend | registered before the first call | after it "
        "| after it, then `torch._dynamo.reset()` |"
    )
    rows = [head, "|---|---|---|---|---|"]

    def word(called: bool) -> str:
        return "called" if called else "**not called**"

    for kind in KINDS:
        for backend in BACKENDS:
            before, after, reset = results[backend][kind]
            rows.append(
                f"| {kind} | `{backend}` | {word(before)} | {word(after)} | {word(reset)} |"
            )
    return "\n".join(rows) + "\n"


def watch_text() -> str:
    results = _measured("--watch")
    out = []
    for when in ("before", "after"):
        seen = results[when]
        out.append(f"watch() entered {when} the first compiled call:")
        out.append(f"  activations recorded: {', '.join(seen['activations']) or 'none'}")
        out.append(f"  output gradients recorded: {', '.join(seen['outputs']) or 'none'}")
        out.append(f"  parameter gradients recorded: {', '.join(seen['parameters'])}")
        out.append(f"  graphs dynamo compiled: {seen['graphs']}")
        out.extend(
            textwrap.fill(f"warning: {message}", 86, initial_indent="  ", subsequent_indent="    ")
            for message in seen["warnings"]
        )
    return "\n".join(out) + "\n"


def blocks() -> dict[str, str]:
    plain = _run("examples/compile_hooks.py")
    diagnosed = _run("-m", "gradprobe", "diagnose", "examples/compile_hooks.py")
    lines = diagnosed.stderr.splitlines()
    start = next(i for i, line in enumerate(lines) if "gradprobe diagnose" in line)
    traced = _run("examples/compile_trace.py")
    return {
        "compile-hooks-table": hooks_table(),
        "compile-plain": f"```text\n{_lines(plain.stdout)}```\n",
        "compile-diagnose": f"```text\n{_lines(chr(10).join(lines[start:]))}```\n",
        "compile-trace": f"```text\n{_lines(traced.stdout)}```\n",
        "compile-watch": f"```text\n{watch_text()}```\n",
    }


def write_images(images: Path) -> list[Path]:
    """The picture of examples/compile_trace.py's graph (layout depends on the engine)."""
    done = _run("examples/compile_trace.py", str(images / SVG))
    if done.returncode != 0:
        raise RuntimeError(done.stderr)
    return [images / SVG]


def stale_images(images: Path) -> list[Path]:
    return [] if (images / SVG).exists() else [images / SVG]


if __name__ == "__main__":
    measure = {"--hooks": measure_hooks, "--watch": measure_watch}[sys.argv[1]]
    print(json.dumps(measure()))
