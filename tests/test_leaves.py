"""leaf_report: status and the reason a .grad is None, from live tensors and traced graphs."""

from __future__ import annotations

import pytest
import torch
from torch import nn

import gradprobe
from gradprobe.render.text import to_text


def _rows(report: gradprobe.LeafReport) -> dict[str, gradprobe.LeafRow]:
    return {row.name: row for row in report.rows}


def test_parameter_cut_by_detach_is_reported_as_not_in_graph() -> None:
    encoder, head = nn.Linear(3, 4), nn.Linear(4, 1)
    model = nn.ModuleDict({"encoder": encoder, "head": head})
    loss = head(encoder(torch.ones(2, 3)).detach()).sum()
    graph = gradprobe.trace(loss, model=model)
    loss.backward()
    rows = _rows(gradprobe.leaf_report(graph, model))
    assert rows["head.weight"].has_grad and rows["head.weight"].note is None
    assert not rows["encoder.weight"].has_grad
    assert rows["encoder.weight"].in_graph is False
    assert "not in the traced graph" in (rows["encoder.weight"].note or "")


def test_non_leaf_and_no_grad_reasons() -> None:
    w = torch.ones(2, requires_grad=True)
    hidden = w * 3
    kept = w * 4
    kept.retain_grad()
    frozen = torch.ones(2)
    (hidden.sum() + kept.sum()).backward()
    report = gradprobe.leaf_report({"w": w, "hidden": hidden, "kept": kept, "frozen": frozen})
    rows = _rows(report)
    assert rows["w"].has_grad and rows["w"].is_leaf
    assert not rows["hidden"].is_leaf and not rows["hidden"].has_grad
    assert "retain_grad" in (rows["hidden"].note or "")
    assert rows["hidden"].grad_fn == "MulBackward0"
    assert rows["kept"].retains_grad and rows["kept"].has_grad
    assert rows["frozen"].note == "requires_grad=False"
    assert [row.name for row in report.missing_grad] == ["hidden"]


def test_reading_a_non_leaf_does_not_warn() -> None:
    hidden = torch.ones(2, requires_grad=True) * 2
    with _no_warnings():
        gradprobe.leaf_report(hidden)


class _no_warnings:
    def __enter__(self) -> None:
        import warnings

        self._catcher = warnings.catch_warnings()
        self._catcher.__enter__()
        warnings.simplefilter("error")

    def __exit__(self, *exc: object) -> None:
        self._catcher.__exit__(*exc)


def test_traced_leaves_without_live_source_are_listed() -> None:
    w = torch.ones(2, requires_grad=True)
    graph = gradprobe.trace((w * 2).sum(), names={"w": w})
    rows = _rows(gradprobe.leaf_report(graph))
    assert rows["w"].in_graph is True and rows["w"].kind == "input"


def test_text_rendering_groups_reasons_and_fits_80_columns() -> None:
    model = nn.Sequential(nn.Linear(3, 3), nn.Linear(3, 1))
    loss = model[1](model[0](torch.ones(1, 3)).detach()).sum()
    graph = gradprobe.trace(loss, model=model)
    loss.backward()
    text = to_text(gradprobe.leaf_report(graph, model), width=80)
    assert "why .grad is None:" in text
    assert "0.weight, 0.bias: not in the traced graph" in text
    assert max(len(line.rstrip()) for line in text.splitlines()) <= 80
    assert str(gradprobe.leaf_report(graph, model)).count("0.weight") == 2


def test_a_graph_traced_without_model_neither_doubles_rows_nor_claims_a_cut() -> None:
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))  # healthy
    loss = model(torch.ones(2, 3)).sum()
    graph = gradprobe.trace(loss)  # no model=: the leaves have no names
    assert [leaf.name for leaf in graph.leaves] == [None] * 4
    for report in (gradprobe.leaf_report(graph, model), gradprobe.leaf_report(model, graph)):
        names = [row.name for row in report.rows]
        assert names == [name for name, _ in model.named_parameters()]  # each once
        assert all(row.in_graph is None for row in report.rows)  # unknown, not False
        text = str(report)
        assert "not in the traced graph" not in text
        assert "(unnamed leaf)" not in text
        assert report.notes == (
            (
                "the graph reaches 4 unnamed leaf tensors (it was traced without model= or "
                "names=), which cannot be matched to the tensors listed; trace(loss, "
                "model=model) tells which parameters it reaches"
            ),
        )
        assert "note: the graph reaches 4 unnamed leaf tensors" in text
    named = gradprobe.leaf_report(gradprobe.trace(loss, model=model), model)
    assert all(row.in_graph is True for row in named.rows) and named.notes == ()


def test_a_graph_traced_with_model_still_says_which_parameters_it_does_not_reach() -> None:
    layer = nn.Linear(2, 2)
    scale = torch.ones(2, requires_grad=True)  # an unnamed leaf that is no parameter
    loss = (layer(torch.ones(1, 2)).detach() * scale).sum()
    graph = gradprobe.trace(loss, model=layer)
    assert graph.model == "Linear" and gradprobe.trace(loss).model is None
    report = gradprobe.leaf_report(graph, layer)
    rows = _rows(report)
    assert rows["weight"].in_graph is False and rows["bias"].in_graph is False
    assert rows["weight"].note == (
        "not in the traced graph: unused, or cut by detach()/.data/no_grad()"
    )
    assert report.notes == ()
    assert [row.name for row in report.rows] == ["weight", "bias", "(unnamed leaf)"]


@pytest.mark.parametrize("bad", [3, "w", [torch.ones(1)], {"w": 2}])
def test_bad_sources_are_rejected_with_what_was_passed(bad: object) -> None:
    with pytest.raises(gradprobe.GradprobeTypeError, match="leaf_report"):
        gradprobe.leaf_report(bad)  # type: ignore[arg-type]
