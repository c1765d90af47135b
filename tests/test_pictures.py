"""Findings draw themselves: the slice of the graph around the problem, culprit marked.

Each test makes a real bug, records it, and checks the picture's structure: which nodes
carry the class ``gp-problem``, what their text says, and the caption's cause line. The
layout engine is real (graphviz-pure or dot); coordinates are never compared.
"""

from __future__ import annotations

import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import torch

import gradprobe
from gradprobe.diagnose import diagnose
from gradprobe.errors import GradprobeValueError
from gradprobe.findings import make_finding
from gradprobe.render import svg as render_svg
from gradprobe.render.picture import finding_dot

pytest_plugins = ["pytester"]

SVG = "{http://www.w3.org/2000/svg}"
needs_engine = pytest.mark.skipif(
    render_svg._system_dot() is None and render_svg._graphviz_pure() is None,
    reason="no Graphviz engine",
)


def _problems(svg: str) -> list[str]:
    """The text of every element of class gp-problem, one string per element."""
    root = ET.fromstring(svg)
    return [
        " ".join(t.text or "" for t in group.iter(f"{SVG}text"))
        for group in root.iter(f"{SVG}g")
        if "gp-problem" in (group.get("class") or "").split()
    ]


def _caption(svg: str) -> str:
    root = ET.fromstring(svg)
    graph = next(g for g in root.iter(f"{SVG}g") if g.get("class") == "graph")
    return " ".join(t.text or "" for t in graph.findall(f"{SVG}text"))


def test_trace_inside_record_knows_versions_at_save_time() -> None:
    with gradprobe.record():
        a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = a.sigmoid()
        loss = (b * a).sum()
        b[1] = 2.0
        inside = gradprobe.trace(loss)
    outside = gradprobe.trace(loss)
    saved = {(n.name, s.slot): s for n in inside.nodes for s in n.saved}
    assert saved["SigmoidBackward0", "result"].version_saved == 0
    assert saved["SigmoidBackward0", "result"].version_now == 1
    assert saved["SigmoidBackward0", "result"].stale is True
    assert saved["MulBackward0", "other"].stale is False  # `a` was never written
    assert all(s.version_saved is None for n in outside.nodes for s in n.saved)


@needs_engine
def test_inplace_error_shows_the_stale_saved_tensor_and_the_writing_line() -> None:
    with gradprobe.record() as rec:
        a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = a.sigmoid()
        b[1] = 2  # the write
        with pytest.raises(RuntimeError, match="inplace"):
            b.sum().backward()
    finding = next(f for f in rec.findings if f.code == "GP101")
    part = finding.graph_slice
    assert part is not None
    assert [m.kind for m in part.marks] == ["stale"]
    marked = part.graph.nodes[part.marks[0].node]
    assert marked.name == "SigmoidBackward0"
    assert [(s.version_saved, s.version_now) for s in marked.saved] == [(0, 1)]
    svg = finding.to_svg()
    problems = _problems(svg)
    assert len(problems) == 1
    assert "Sigmoid" in problems[0] and "saved v0 → now v1" in problems[0]
    assert "b[1] = 2" in problems[0]  # the line that wrote over it
    assert "GP101" in _caption(svg) and "b[1] = 2" in _caption(svg)
    # the leaf was traced before backward filled it
    assert "grad not computed yet" in svg and ">no grad<" not in svg


@needs_engine
def test_nan_picture_marks_where_it_was_born() -> None:
    with gradprobe.record() as rec:
        logits = torch.randn(2, 4, requires_grad=True)
        masked = logits.clone()
        masked[:, -1] = -float("inf")  # the first infinity
        teacher = torch.zeros(2, 4)
        teacher[:, -1] = -float("inf")
        loss = -(teacher.softmax(-1) * masked.log_softmax(-1)).sum()  # 0 * -inf
        loss.backward()
    finding = next(f for f in rec.findings if f.code == "GP201")
    assert finding.graph_slice is not None
    kinds = {
        finding.graph_slice.graph.nodes[m.node].name: m.kind for m in finding.graph_slice.marks
    }
    assert kinds == {"MulBackward0": "nonfinite", "torch::autograd::CopySlices": "nonfinite"}
    problems = _problems(finding.to_svg())
    assert any("Mul" in p and "first NaN" in p for p in problems)


SCRIPT = """\
import torch
x = torch.randn(8, 3)
w = torch.randn(3, 2, requires_grad=True)
scores = (x @ w).softmax(1)
picked = scores.argmax(1)  # CUT
term = (picked == 1).float().mean()
loss = scores.sum() + term  # JOIN
loss.backward()
"""


@needs_engine
def test_diagnose_svg_draws_the_cut_as_a_labelled_dashed_edge(tmp_path: Path) -> None:
    script = tmp_path / "cut.py"
    script.write_text(SCRIPT)
    out = tmp_path / "pictures"
    with (tmp_path / "err.txt").open("w") as stream:
        assert diagnose(script, svg_dir=out, stream=stream) == 0
    assert "1 picture in" in (tmp_path / "err.txt").read_text()
    assert sorted(p.name for p in out.iterdir()) == ["GP113-0.svg"]
    svg = (out / "GP113-0.svg").read_text()
    problems = _problems(svg)
    assert any(p.startswith("argmax()") and "cut.py:5" in p for p in problems)  # the cut box
    assert any(p.strip() == "no gradient: argmax()" for p in problems)  # the dashed edge
    assert any("Add" in p and "joins the loss" in p for p in problems)  # where it joined
    root = ET.fromstring(svg)
    edges = [
        g for g in root.iter(f"{SVG}g") if (g.get("class") or "").split() == ["edge", "gp-problem"]
    ]
    assert edges and all(p.get("stroke-dasharray") for g in edges for p in g.iter(f"{SVG}path"))


def test_diagnose_svg_refuses_a_file(tmp_path: Path) -> None:
    script = tmp_path / "ok.py"
    script.write_text("print('hi')\n")
    taken = tmp_path / "taken.txt"
    taken.write_text("")
    with pytest.raises(GradprobeValueError, match=r"taken\.txt.*not a directory"):
        diagnose(script, svg_dir=taken)


def test_a_finding_without_a_graph_still_draws_its_problem() -> None:
    finding = make_finding("GP103", node="MulBackward0")
    assert finding.graph_slice is None
    dot = finding_dot(finding)
    assert "what [label=<<B>node: MulBackward0</B>" in dot
    assert dot.count('class="gp-problem"') == 1
    assert "legend" in dot


@needs_engine
def test_recording_to_svg_stacks_every_finding() -> None:
    with gradprobe.record() as rec:
        a = torch.tensor([1.0, 2.0], requires_grad=True)
        b = a.exp()
        b.add_(1)
        with pytest.raises(RuntimeError):
            b.sum().backward()
    svg = rec.to_svg()
    root = ET.fromstring(svg)
    assert len(root.findall(f"{SVG}svg")) == len(rec.findings) >= 1
    with gradprobe.record() as quiet:
        pass
    assert "nothing to report" in quiet.to_svg()


@needs_engine
def test_pytest_svg_dir_draws_the_findings_of_a_failing_test(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_bug=textwrap.dedent(
            """
            import pytest, torch

            @pytest.mark.gradprobe
            def test_inplace():
                a = torch.tensor([1.0, 2.0], requires_grad=True)
                b = a.sigmoid()
                b[0] = 0.0
                b.sum().backward()
            """
        )
    )
    result = pytester.runpytest("-p", "no:cacheprovider", "--gradprobe-svg-dir", "pics")
    result.assert_outcomes(failed=1)
    written = sorted(p.name for p in (pytester.path / "pics").iterdir())
    assert "test_bug.py_test_inplace-GP101-0.svg" in written
    svg = (pytester.path / "pics" / "test_bug.py_test_inplace-GP101-0.svg").read_text()
    assert any("saved v0 → now v1" in p for p in _problems(svg))
