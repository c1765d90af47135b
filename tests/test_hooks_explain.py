"""gradprobe.hooks.explain: what legacy and full backward hooks receive (TORCH-FACTS Q1-Q3)."""

from __future__ import annotations

import json

import pytest
import torch
import torch.nn.modules.module as torch_module
from torch import nn

from gradprobe.errors import GradprobeTypeError, GradprobeValueError
from gradprobe.hooks import HookLayout, explain


def _slots(layout: HookLayout, which: str = "legacy") -> list[tuple[str, tuple[int, ...] | None]]:
    slots = layout.legacy_grad_input if which == "legacy" else layout.full_grad_input
    return [(slot.label, slot.shape) for slot in slots]


def test_linear_gets_bias_input_and_transposed_weight() -> None:
    layout = explain(nn.Linear(3, 5), torch.randn(4, 3, requires_grad=True))
    assert layout.node == "AddmmBackward0"
    assert _slots(layout) == [
        ("grad of bias", (5,)),
        ("grad of input 0", (4, 3)),
        ("grad of weight, transposed", (3, 5)),
    ]
    assert layout.legacy_grad_input[0].note == "summed over the batch, not per-sample"
    assert [s.role for s in layout.legacy_grad_input] == ["param", "input", "param_t"]
    assert _slots(layout, "full") == [("grad of input 0", (4, 3))]
    assert [(s.label, s.shape) for s in layout.legacy_grad_output] == [
        ("grad of the output", (4, 5))
    ]
    assert layout.legacy_complete
    assert layout.legacy_warning is not None and "non-full backward hook" in layout.legacy_warning
    assert layout.findings == ()


def test_linear_on_3d_input_gets_only_a_flattened_output_grad() -> None:
    layout = explain(nn.Linear(3, 5), torch.randn(4, 7, 3, requires_grad=True))
    assert layout.node == "ViewBackward0"
    assert _slots(layout) == [("grad of the output, reshaped", (28, 5))]
    assert not layout.legacy_complete
    assert _slots(layout, "full") == [("grad of input 0", (4, 7, 3))]


def test_linear_without_bias_and_input_without_grad() -> None:
    assert _slots(explain(nn.Linear(3, 5, bias=False))) == [
        ("grad of input 0", (4, 3)),
        ("grad of weight, transposed", (3, 5)),
    ]
    layout = explain(nn.Linear(3, 5), torch.randn(4, 3))
    assert _slots(layout) == [
        ("grad of bias", (5,)),
        ("None", None),
        ("grad of weight, transposed", (3, 5)),
    ]
    assert _slots(layout, "full") == [("None", None)]
    assert layout.full_warning is not None and "no inputs require gradients" in layout.full_warning


@pytest.mark.parametrize(
    ("conv", "shape", "weight"),
    [
        (nn.Conv2d(2, 4, 3), (4, 2, 7, 7), (4, 2, 3, 3)),
        (nn.Conv1d(2, 4, 3), (4, 2, 7), (4, 2, 3)),
    ],
)
def test_convolutions_get_input_weight_bias(
    conv: nn.Module, shape: tuple[int, ...], weight: tuple[int, ...]
) -> None:
    layout = explain(conv)
    assert layout.node == "ConvolutionBackward0"
    assert _slots(layout) == [
        ("grad of input 0", shape),
        ("grad of weight", weight),
        ("grad of bias", (4,)),
    ]
    assert layout.input_shapes == (shape,)


def test_conv_without_bias_has_a_none_third_element() -> None:
    layout = explain(nn.Conv2d(2, 4, 3, bias=False), torch.randn(2, 2, 6, 6, requires_grad=True))
    assert [label for label, _ in _slots(layout)] == ["grad of input 0", "grad of weight", "None"]


def test_composite_module_gets_the_last_operation_only() -> None:
    model = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 2))
    layout = explain(model, torch.randn(3, 4, requires_grad=True))
    assert layout.node == "AddmmBackward0"
    assert _slots(layout) == [
        ("grad of 2.bias", (2,)),
        ("grad of the output of 1 (ReLU)", (3, 6)),
        ("grad of 2.weight, transposed", (6, 2)),
    ]
    assert not layout.legacy_complete
    assert _slots(layout, "full") == [("grad of input 0", (3, 4))]
    assert "the last operation only" in layout.summary()


def test_values_are_identified_not_just_shapes() -> None:
    # a square Linear: input grad, weight grad and weight grad transposed all have shape (3, 3)
    layout = explain(nn.Linear(3, 3, bias=False), torch.randn(3, 3, requires_grad=True))
    assert [label for label, _ in _slots(layout)] == [
        "grad of input 0",
        "grad of weight, transposed",
    ]


def test_inplace_module_breaks_the_full_hook() -> None:
    relu = nn.ReLU(inplace=True)
    layout = explain(relu, torch.randn(4, 3, requires_grad=True))
    assert layout.full_error is not None
    assert "Output 0 of BackwardHookFunction is a view" in layout.full_error
    assert layout.node == "ReluBackward0"
    assert _slots(layout) == [("grad of input 0", (4, 3))]
    assert layout.findings == ()  # no hook on the module itself
    handle = relu.register_full_backward_hook(lambda m, gi, go: None)
    try:
        assert [f.code for f in explain(relu, torch.randn(4, 3, requires_grad=True)).findings] == [
            "GP305"
        ]
    finally:
        handle.remove()


class DictOut(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(3, 3)

    def forward(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        return {"y": self.lin(x)}


def test_dict_output_never_calls_the_full_hook() -> None:
    module = DictOut()
    handle = module.register_full_backward_hook(lambda m, gi, go: None)
    try:
        layout = explain(module, torch.randn(2, 3, requires_grad=True))
    finally:
        handle.remove()
    assert not layout.full_fired
    assert layout.legacy_fired
    assert [f.code for f in layout.findings] == ["GP306"]


def test_findings_for_the_hooks_the_module_carries() -> None:
    linear = nn.Linear(3, 2)
    seq = nn.Sequential(nn.Linear(3, 2), nn.Tanh())
    handles = [
        linear.register_backward_hook(lambda m, gi, go: None),
        seq.register_backward_hook(lambda m, gi, go: None),
    ]
    try:
        lin_findings = explain(linear).findings
        seq_findings = explain(seq, torch.randn(2, 3, requires_grad=True)).findings
    finally:
        for handle in handles:
            handle.remove()
    assert [(f.code, f.node) for f in lin_findings] == [("GP301", "AddmmBackward0")]
    assert "grad of weight, transposed (3, 2)" in lin_findings[0].message
    assert [(f.code, f.node) for f in seq_findings] == [("GP302", "TanhBackward0")]
    full = nn.Linear(3, 2)
    full.register_full_backward_hook(lambda m, gi, go: None)
    assert [f.code for f in explain(full, torch.randn(2, 3)).findings] == ["GP303"]


def test_the_original_module_rng_and_global_hooks_are_untouched() -> None:
    model = nn.Sequential(nn.Linear(3, 3), nn.ReLU())
    calls: list[str] = []
    model.register_forward_hook(lambda m, a, o: calls.append("module hook"))
    handle = torch_module.register_module_forward_hook(lambda m, a, o: calls.append("global"))
    params = [p.detach().clone() for p in model.parameters()]
    hooks_before = dict(model._forward_hooks)
    globals_before = torch_module._global_forward_hooks
    torch.manual_seed(123)
    expected_next = torch.rand(3)
    torch.manual_seed(123)
    try:
        explain(model, torch.randn(2, 3, requires_grad=True))
        after = torch.rand(3)
    finally:
        handle.remove()
    # explain's randn(2, 3) above consumed the global RNG, explain() itself did not
    torch.manual_seed(123)
    torch.randn(2, 3)
    assert torch.equal(after, torch.rand(3))
    assert not torch.equal(after, expected_next)
    assert calls == []
    assert all(p.grad is None for p in model.parameters())
    assert all(torch.equal(a, b) for a, b in zip(params, model.parameters(), strict=True))
    assert dict(model._forward_hooks) == hooks_before
    assert torch_module._global_forward_hooks is globals_before


def test_rendering_summary_and_dict() -> None:
    layout = explain(nn.Linear(3, 5))
    text = str(layout)
    assert "register_backward_hook (legacy) grad_input, attached to AddmmBackward0" in text
    assert "grad of weight, transposed" in text
    assert "register_full_backward_hook grad_input" in text
    assert layout.summary() == (
        "Linear: a legacy backward hook gets grad_input = (grad of bias (5,), grad of input 0 "
        "(4, 3), grad of weight, transposed (3, 5)) from AddmmBackward0; a full backward hook "
        "gets grad_input = (grad of input 0 (4, 3),)."
    )
    data = json.loads(json.dumps(layout.to_dict()))
    assert data["legacy_grad_input"][2] == {
        "index": 2,
        "shape": [3, 5],
        "role": "param_t",
        "label": "grad of weight, transposed",
        "note": None,
    }
    assert data["legacy_complete"] is True
    assert repr(layout) == "<HookLayout Linear: legacy hook sees AddmmBackward0>"


def test_bad_arguments() -> None:
    with pytest.raises(GradprobeTypeError, match="explain\\(\\) shows what the backward hooks"):
        explain("linear")  # type: ignore[arg-type]
    with pytest.raises(GradprobeValueError, match="needs example inputs for Tanh"):
        explain(nn.Tanh())
    with pytest.raises(GradprobeValueError, match="at least one tensor"):
        explain(nn.Tanh(), 3.0)


class Uncopyable(nn.Linear):
    def __deepcopy__(self, memo: object) -> None:
        raise TypeError("no copies")


def test_module_that_cannot_be_copied() -> None:
    with pytest.raises(GradprobeValueError, match="deepcopy\\(Uncopyable\\) failed: no copies"):
        explain(Uncopyable(2, 2))
