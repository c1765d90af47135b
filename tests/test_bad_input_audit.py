"""Issue 18, bad input: names and paths that look like rich markup are shown as written.

The other bad-input cases of the issue each have a test beside the code they exercise
(saliency: test_saliency.py, assert_gradcheck: test_testing.py, strategies:
test_hooks_strategies.py, to_dot: test_render_dot.py, timeline: test_hooks_timeline.py,
watch and session.report: test_watch.py, trace: test_trace.py, explain: test_explain.py).
This file covers what those do not: every rich report other than ``session.report()``
(which test_watch.py covers), and the lines the command line prints with a user's path in
them.
"""

from __future__ import annotations

import io
import textwrap
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest
import torch
from rich.console import Console
from torch import nn

import gradprobe
from gradprobe import demo
from gradprobe.diagnose import diagnose
from gradprobe.hooks import explain, inventory, timeline

# Each one breaks rich's markup in its own way: a closing tag with nothing to close (a
# MarkupError), a style that would restyle the rest of the line, a hyperlink.
CLOSE, STYLE, LINK = "[/]", "[bold red]act", "[link=https://example]head"
HYPERLINK = "\x1b]8;"  # the OSC 8 escape a [link=...] tag becomes on a terminal


def _model() -> nn.Sequential:
    torch.manual_seed(0)
    model = nn.Sequential()
    model.add_module(CLOSE, nn.Linear(3, 4))
    model.add_module(STYLE, nn.Linear(4, 4))
    model.add_module(LINK, nn.Linear(4, 1))
    return model


def _noop(*args: object) -> None:
    return None


def _check_report() -> object:
    model = _model()
    loss = model(torch.randn(2, 3)).sum()
    with torch.no_grad():
        model.get_submodule(LINK).weight.mul_(2.0)  # GP109: updated between forward and backward
    return gradprobe.check(loss, model=model)


def _finding() -> object:
    report = _check_report()
    (finding,) = report.findings  # type: ignore[attr-defined]
    return finding


def _leaf_report() -> object:
    model = _model()
    loss = model(torch.randn(2, 3)).sum()
    graph = gradprobe.trace(loss, model=model)
    loss.backward()
    return gradprobe.leaf_report(graph, model)


def _inventory() -> object:
    model = _model()
    for child in model.children():
        child.register_forward_hook(_noop)
    return inventory(model)


def _timeline() -> object:
    model = _model()
    for child in model.children():
        child.register_forward_hook(_noop)
    return timeline(lambda: model(torch.randn(2, 3)).sum().backward(), model=model)


def _hook_layout() -> object:
    model = _model()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's own warning about the legacy hook
        model.register_backward_hook(_noop)
    return explain(model, torch.randn(2, 3))


def _recording() -> object:
    model = _model()
    with gradprobe.record() as recording:
        loss = model(torch.randn(2, 3)).sum()
        with torch.no_grad():
            model.get_submodule(LINK).weight.mul_(2.0)
        with pytest.raises(RuntimeError):
            loss.backward()
    return recording


@pytest.mark.parametrize(
    ("make", "names"),
    [
        (_check_report, [f"{LINK}.weight"]),
        (_finding, [f"{LINK}.weight"]),
        (_leaf_report, [f"{CLOSE}.weight", f"{STYLE}.bias", f"{LINK}.weight"]),
        (_inventory, [CLOSE, STYLE, LINK]),
        (_timeline, [CLOSE, STYLE, LINK]),
        (_hook_layout, [LINK]),
        (_recording, ["GP109"]),  # record() knows no names; its report must still print
    ],
    ids=[
        "CheckReport",
        "Finding",
        "LeafReport",
        "HookInventory",
        "HookTimeline",
        "HookLayout",
        "Recording",
    ],
)
def test_names_that_look_like_rich_markup_are_shown_as_written(
    make: Callable[[], object], names: list[str]
) -> None:
    report = make()
    styled = io.StringIO()
    Console(file=styled, width=200, force_terminal=True, color_system="truecolor").print(report)
    assert HYPERLINK not in styled.getvalue()  # no link was made from a module name
    plain = Console(file=io.StringIO(), width=200, color_system=None, record=True)
    plain.print(report)
    text = plain.export_text()
    for name in names:
        assert name in text
    for name in names:
        assert name in str(report)


_SCRIPT = """\
import torch
w = torch.ones(3, requires_grad=True)
y = w * 2
z = y * y
y.mul_(2)
z.sum().backward()
"""


def test_diagnose_shows_a_script_name_and_picture_folder_as_written(tmp_path: Path) -> None:
    script = tmp_path / "train[bold red].py"
    script.write_text(textwrap.dedent(_SCRIPT))
    pictures = tmp_path / "pictures[" / "]x"  # "pictures[/]x": a closing tag, as rich reads it
    stream = io.StringIO()
    status = diagnose(script, svg_dir=pictures, stream=stream)
    assert status == 1  # the script's own RuntimeError, not rich's MarkupError
    out = stream.getvalue()
    assert "gradprobe diagnose train[bold red].py" in out
    # wrapped at 80 columns, anywhere in the path: compare without the white space
    assert f"1picturein{pictures}" in "".join(out.split())
    assert len(list(pictures.glob("*.svg"))) == 1


def test_demo_shows_the_svg_path_as_written(tmp_path: Path) -> None:
    folder = tmp_path / "out["
    folder.mkdir()
    path = folder / "]graph.svg"  # ".../out[/]graph.svg": a closing tag, as rich reads it
    stream = io.StringIO()
    demo.run(Console(file=stream, width=100, color_system=None), svg=path)
    assert f"graphwrittento{path}" in "".join(stream.getvalue().split())  # however wrapped
    assert path.read_text().lstrip().startswith(("<?xml", "<svg"))
