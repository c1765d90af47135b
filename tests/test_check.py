"""gradprobe.check: preflight for backward() on real graphs (TORCH-FACTS Q6/Q7)."""

from __future__ import annotations

import json

import pytest
import torch
from rich.console import Console

from gradprobe._check import CheckReport, check, parse_version_error
from gradprobe.errors import GradprobeError, GradprobeTypeError, GradprobeValueError
from gradprobe.findings import BackwardWouldFail


def _fails(loss: torch.Tensor) -> str:
    with pytest.raises(RuntimeError) as info:
        loss.backward()
    return str(info.value)


def test_indexed_write_into_saved_tensor_is_found_before_backward() -> None:
    a = torch.ones(5, requires_grad=True)
    b = a + 2
    loss = (b * b).mean()
    b[0] = 1000.0
    report = check(loss, names={"b": b})
    assert not report.ok
    (finding,) = report.findings
    assert finding.code == "GP101"
    assert finding.node == "MulBackward0"
    assert finding.tensor == "b"
    assert finding.details["slots"] == ["other", "self"]
    assert finding.details["version_saved"] == 0
    assert finding.details["version_now"] == 1
    assert finding.details["shape"] == [5]
    assert finding.details["is_leaf"] is False
    assert finding.details["grad_fn_now"] == "torch::autograd::CopySlices"
    assert "indexed or sliced assignment" in finding.message
    # ...and backward really fails the way check said.
    assert "is at version 1; expected version 0" in _fails(loss)


def test_unnamed_tensor_is_described_by_dtype_and_shape() -> None:
    a = torch.ones(2, 3, requires_grad=True)
    b = a.exp()
    loss = b.sum()
    b.add_(1)
    (finding,) = check(loss).findings
    assert finding.code == "GP101"
    assert finding.node == "ExpBackward0"
    assert finding.tensor == "torch.FloatTensor [2, 3]"
    assert "float32, shape (2, 3)" in finding.message
    assert finding.details["is_output"] is True


def test_sigmoid_then_relu_inplace_blames_sigmoid_result() -> None:
    x = torch.randn(5, requires_grad=True)
    s = torch.sigmoid(x)
    s.relu_()
    report = check(s.sum())
    (finding,) = report.findings
    assert (finding.code, finding.node) == ("GP101", "SigmoidBackward0")
    assert finding.details["slot"] == "result"
    assert (finding.details["version_saved"], finding.details["version_now"]) == (0, 1)
    assert "relu_" in finding.message
    assert "output 0 of Sigmoid" in _fails(s.sum())


def test_optimizer_step_between_forward_and_backward_names_the_parameter() -> None:
    layer = torch.nn.Linear(2, 3)
    optimizer = torch.optim.SGD(layer.parameters(), lr=0.1)
    x = torch.randn(4, 2, requires_grad=True)  # so addmm saves the weight
    layer(x).sum().backward()  # last iteration's gradients
    loss = layer(x).pow(2).sum()
    optimizer.step()  # bug: step between this forward and its backward
    (finding,) = check(loss, model=layer).findings
    assert finding.code == "GP109"
    assert finding.parameter == "weight"
    assert finding.node == "AddmmBackward0"
    assert (finding.details["version_saved"], finding.details["version_now"]) == (1, 2)
    assert finding.details["is_parameter"] is True
    assert "'weight'" in finding.message
    # Without model= it is still recognized as a parameter, just unnamed.
    (unnamed,) = check(loss).findings
    assert (unnamed.code, unnamed.parameter) == ("GP109", None)
    assert "is at version 2; expected version 1" in _fails(loss)


def test_leaf_written_under_no_grad_after_save() -> None:
    a = torch.ones(3, requires_grad=True)
    loss = (a * a).sum()
    with torch.no_grad():
        a[:] = 10
    (finding,) = check(loss, names={"a": a}).findings
    assert finding.code == "GP101"
    assert finding.tensor == "a"
    assert finding.details["is_leaf"] is True
    assert "without grad_fn" in finding.message


def test_freed_graph_is_reported() -> None:
    x = torch.ones(3, requires_grad=True)
    loss = (x * x).sum()
    loss.backward()
    (finding,) = check(loss).findings
    assert finding.code == "GP103"
    assert finding.node == "MulBackward0"
    assert finding.details["freed_nodes"] == 1
    assert "second time" in _fails(loss)


def test_clean_graphs_are_ok() -> None:
    layer = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1))
    x = torch.randn(2, 3, requires_grad=True)
    loss = torch.sigmoid(layer(x)).sum()
    report = check(loss, model=layer)
    assert report.ok and report.findings == ()
    report.raise_if_failed()  # does nothing
    assert "ok" in repr(report)
    loss.backward()  # and check was right
    unsaved = (x + 1).sum()  # saves no tensor, so backward twice is fine (Q6 d)
    unsaved.backward()
    assert check(unsaved).ok
    unsaved.backward()
    scaled = (x * 2).sum()  # saves the scalar 2 as a tensor: a second backward fails
    scaled.backward()
    assert [f.code for f in check(scaled).findings] == ["GP103"]
    _fails(scaled)


def test_saved_but_unmodified_after_retained_backward_is_ok() -> None:
    x = torch.ones(3, requires_grad=True)
    loss = (x * x).sum()
    loss.backward(retain_graph=True)
    assert check(loss).ok


def test_custom_function_saved_tensors_are_probed() -> None:
    class Twice(torch.autograd.Function):
        @staticmethod
        def forward(ctx: torch.autograd.function.FunctionCtx, x: torch.Tensor) -> torch.Tensor:
            y = x * 2
            ctx.save_for_backward(x, y)
            return y

        @staticmethod
        def backward(ctx: torch.autograd.function.FunctionCtx, g: torch.Tensor) -> torch.Tensor:
            x, _ = ctx.saved_tensors  # type: ignore[attr-defined]
            return g * x

    a = torch.ones(3, requires_grad=True)
    r = a + 1
    out = Twice.apply(r)
    loss = out.sum()
    assert check(loss).ok
    r.mul_(2)
    (finding,) = check(loss).findings
    assert (finding.node, finding.details["slot"]) == ("TwiceBackward", "saved_tensors[0]")


def test_root_without_grad_is_reported() -> None:
    with torch.no_grad():
        loss = torch.ones(3, requires_grad=True).sum()
    (finding,) = check(loss).findings
    assert finding.code == "GP104"
    assert "does not require grad" in _fails(loss)


def test_raise_if_failed_raises_backward_would_fail() -> None:
    a = torch.ones(5, requires_grad=True)
    b = a + 2
    loss = (b * b).mean()
    b[0] = 1.0
    report = check(loss)
    with pytest.raises(BackwardWouldFail) as info:
        report.raise_if_failed()
    assert isinstance(info.value, GradprobeError) and isinstance(info.value, RuntimeError)
    assert info.value.findings == report.findings
    assert "GP101" in str(info.value)


def test_report_to_dict_str_and_rich() -> None:
    x = torch.ones(3, requires_grad=True)
    loss = (x * x).sum()
    loss.backward()
    report = check(loss)
    data = json.loads(json.dumps(report.to_dict()))
    assert data["ok"] is False and data["findings"][0]["code"] == "GP103"
    assert "GP103" in str(report) and "GP103" in repr(report)
    console = Console(width=100, record=True, color_system=None)
    console.print(report)
    assert "backward_through_freed_graph" in console.export_text()
    assert isinstance(report, CheckReport)


def test_bad_arguments_say_what_to_pass() -> None:
    with pytest.raises(GradprobeValueError, match="at least one tensor"):
        check()
    with pytest.raises(GradprobeTypeError, match="only follow tensors"):
        check("loss")  # type: ignore[arg-type]
    with pytest.raises(GradprobeTypeError, match=r"nn\.Module"):
        check(torch.ones(1, requires_grad=True), model=object())  # type: ignore[arg-type]


def test_parse_version_error_reads_every_part() -> None:
    text = (
        "one of the variables needed for gradient computation has been modified by an inplace "
        "operation: [torch.DoubleTensor [2, 3]], which is output 0 of Exp, is at version 3; "
        "expected version 1 instead. Hint: ..."
    )
    parsed = parse_version_error(text)
    assert parsed is not None
    assert (parsed.tensor_type, parsed.shape, parsed.output, parsed.grad_fn) == (
        "torch.DoubleTensor",
        (2, 3),
        0,
        "Exp",
    )
    assert (parsed.version_now, parsed.version_saved) == (3, 1)
    leaf = parse_version_error(
        "modified by an inplace operation: [torch.FloatTensor []] is at version 1; "
        "expected version 0 instead."
    )
    assert leaf is not None and leaf.grad_fn is None and leaf.shape == ()
    assert parse_version_error("something else") is None
