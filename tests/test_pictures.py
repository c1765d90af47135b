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


# -- findings whose check attaches the slice: hooks on nodes, leaves, cut roots --------------


def _drawn(svg: str) -> dict[str, str]:
    """Each gp-problem element that is part of the graph (not the caption-only ``what``
    box): its DOT key (the SVG title) -> its text."""
    root = ET.fromstring(svg)
    drawn = {}
    for group in root.iter(f"{SVG}g"):
        if "gp-problem" in (group.get("class") or "").split():
            title = group.findtext(f"{SVG}title") or ""
            drawn[title] = " ".join(t.text or "" for t in group.iter(f"{SVG}text"))
    assert "what" not in drawn, "the picture fell back to the caption-only box"
    return drawn


def _only(findings: list[gradprobe.Finding], code: str) -> gradprobe.Finding:
    found = [f for f in findings if f.code == code]
    assert len(found) == 1, [f.code for f in findings]
    return found[0]


@needs_engine
def test_legacy_hook_marks_the_node_it_is_attached_to() -> None:
    with gradprobe.record() as rec:
        layer = torch.nn.Linear(3, 2)
        layer.register_backward_hook(lambda module, grad_in, grad_out: None)
        layer(torch.randn(4, 3)).sum().backward()
    drawn = _drawn(_only(rec.findings, "GP301").to_svg())
    [text] = drawn.values()
    assert text.startswith("Addmm")  # the last node of Linear's forward
    assert "legacy backward hook" in text and "grad of weight" in text


@needs_engine
def test_legacy_hook_on_a_container_marks_only_its_last_op() -> None:
    with gradprobe.record() as rec:
        model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
        model.register_backward_hook(lambda module, grad_in, grad_out: None)
        model(torch.randn(5, 3)).sum().backward()
    finding = _only(rec.findings, "GP302")
    assert finding.graph_slice is not None
    names = [node.name for node in finding.graph_slice.graph.nodes]
    assert "ReluBackward0" in names  # the ops before it are drawn, not marked
    [text] = _drawn(finding.to_svg()).values()
    assert text.startswith("Addmm") and "only the last op of model" in text


@needs_engine
def test_tensor_hook_that_changed_the_shape_marks_the_hooked_node() -> None:
    def pool(grad: torch.Tensor) -> torch.Tensor:
        return grad.sum()

    with gradprobe.record() as rec:
        w = torch.randn(3, requires_grad=True)
        y = w.exp()
        y.register_hook(pool)
        with pytest.raises(RuntimeError, match="hook 'pool'"):
            y.sum().backward()
    [text] = _drawn(_only(rec.findings, "GP307").to_svg()).values()
    assert text.startswith("Exp") and "tensor hook 'pool'" in text and "size" in text


@needs_engine
def test_leaf_written_in_place_is_drawn_as_that_parameter() -> None:
    layer = torch.nn.Linear(3, 2)
    with pytest.raises(RuntimeError, match="leaf"), gradprobe.record() as rec:
        layer(torch.randn(4, 3)).sum().backward()
        assert layer.weight.grad is not None
        layer.weight.sub_(0.1 * layer.weight.grad)  # outside no_grad
    finding = _only(rec.findings, "GP102")
    [text] = _drawn(finding.to_svg()).values()
    assert text.startswith("weight") and "(2, 3)" in text
    assert f"modified in place at line {finding.cause.line}" in text  # type: ignore[union-attr]


@needs_engine
def test_freeze_typo_draws_the_parameter_that_still_trains() -> None:
    with gradprobe.record() as rec:
        model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Linear(4, 1))
        model[0].weight.require_grad = False  # type: ignore[attr-defined]  # the typo
        model(torch.randn(2, 3)).sum().backward()
    [text] = _drawn(_only(rec.findings, "GP111").to_svg()).values()
    assert text.startswith("0.weight") and "still requires grad" in text
    assert "require_grad" in text


@needs_engine
def test_backward_on_a_cut_value_draws_the_cut() -> None:
    with gradprobe.record() as rec:
        w = torch.randn(3, 4, requires_grad=True)
        scores = torch.randn(5, 3) @ w
        loss = scores.argmax(1).float().mean()
        with pytest.raises(RuntimeError, match="does not require grad"):
            loss.backward()
    finding = _only(rec.findings, "GP104")
    drawn = _drawn(finding.to_svg())
    assert list(drawn) == ["cut0"]
    assert drawn["cut0"].startswith("argmax()") and "scores.argmax(1)" in drawn["cut0"]
    assert finding.graph_slice is not None
    assert finding.graph_slice.cuts[0].source is not None  # the matmul it cut is drawn


@needs_engine
def test_correct_hooks_freezes_and_updates_give_no_picture() -> None:
    with gradprobe.record() as rec:
        model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1))
        model.register_full_backward_hook(lambda module, grad_in, grad_out: None)
        model[0].weight.requires_grad_(False)
        hidden = model[1](model[0](torch.randn(2, 3)))
        hidden.register_hook(lambda grad: grad * 2)
        model[2](hidden).sum().backward()
        with torch.no_grad():
            for param in model.parameters():
                if param.grad is not None:
                    param.sub_(0.1 * param.grad)
    assert rec.findings == []
    assert "gp-problem" not in rec.to_svg()


SHARED = Path(__file__).resolve().parent.parent.parent / "shared"


@needs_engine
@pytest.mark.slow
@pytest.mark.parametrize(
    ("case", "code", "culprit"),
    [
        ("cases-2/02_", "GP101", "STALE"),  # the sigmoid whose saved result was overwritten
        ("cases/15_", "GP113", "joins the loss"),  # where the cut value joined the loss
        ("cases/27_", "GP201", ""),  # where the first non-finite value was made
    ],
)
def test_diagnose_svg_highlights_the_problem_of_real_cases(
    case: str, code: str, culprit: str, tmp_path: Path
) -> None:
    # Issue 16's acceptance: stripped copies of public real-bug cases, drawn by diagnose --svg
    found = sorted(SHARED.glob(f"{case}*.py"))
    if not found:
        pytest.skip("../shared is not beside this checkout")
    script = tmp_path / found[0].name
    lines = found[0].read_text().splitlines()
    script.write_text("\n".join(line.split("# <-")[0].rstrip() for line in lines) + "\n")
    out = tmp_path / "pictures"
    with (tmp_path / "err.txt").open("w") as stream:
        diagnose(script, svg_dir=out, stream=stream)
    pictures = sorted(out.glob(f"{code}-*.svg"))
    assert pictures, sorted(p.name for p in out.iterdir())
    svg = pictures[0].read_text()
    root = ET.fromstring(svg)
    marked = [
        g
        for g in root.iter(f"{SVG}g")
        if {"node", "edge"} & set((g.get("class") or "").split())
        and "gp-problem" in (g.get("class") or "").split()
    ]
    assert marked  # a node or edge of the graph, not only the caption
    assert any(culprit in text for text in _problems(svg))
