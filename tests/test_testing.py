"""gradprobe.testing: each assertion passes when the property holds, and when it does not,
fails with the parameter, the reason and (under a recording) the line."""

from __future__ import annotations

import copy
import inspect
import pickle
from pathlib import Path

import pytest
import torch
from torch import nn
from torch.autograd.function import Function

from gradprobe._record import record
from gradprobe.errors import GradprobeError, GradprobeTypeError, GradprobeValueError
from gradprobe.testing import (
    GradprobeAssertionError,
    assert_grad_flows,
    assert_gradcheck,
    assert_grads_finite,
    assert_hook_order,
    assert_is_leaf,
    assert_no_inplace_conflicts,
    assert_not_leaf,
)

HERE = str(Path(__file__).resolve())


def line_of(marker: str) -> int:
    """The line of this file that carries the comment ``# <marker>``."""
    lines = Path(__file__).read_text().splitlines()
    hits = [i for i, text in enumerate(lines, start=1) if text.rstrip().endswith(f"# {marker}")]
    assert len(hits) == 1, marker
    return hits[0]


class Detached(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(nn.Linear(4, 5), nn.ReLU())
        self.head = nn.Linear(5, 2)
        self.unused = nn.Linear(2, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        features = self.features(x)
        return self.head(features.detach())  # DETACH


def failure(call, *args, **kwargs) -> GradprobeAssertionError:  # type: ignore[no-untyped-def]
    with pytest.raises(GradprobeAssertionError) as info:
        call(*args, **kwargs)
    return info.value


# -- assert_grad_flows --------------------------------------------------------------------------


def test_healthy_model_passes_and_gets_bit_identical_grads() -> None:
    model = nn.Sequential(nn.Linear(4, 3), nn.Tanh(), nn.Linear(3, 1))
    twin = copy.deepcopy(model)
    x = torch.randn(6, 4)
    assert_grad_flows(model, model(x).pow(2).mean())
    twin(x).pow(2).mean().backward()
    for (name, p), q in zip(model.named_parameters(), twin.parameters(), strict=True):
        assert p.grad is not None and q.grad is not None, name
        assert torch.equal(p.grad, q.grad), name


def test_detached_and_unused_parameters_are_named_with_the_reason() -> None:
    model = Detached()
    error = failure(assert_grad_flows, model, model(torch.randn(3, 4)).sum())
    failing = {"features.0.weight", "features.0.bias", "unused.weight", "unused.bias"}
    assert {f.parameter for f in error.findings} == failing
    assert {f.code for f in error.findings} == {"GP107"}
    text = str(error)
    assert text.startswith("assert_grad_flows: 4 of 6 parameters get no usable gradient:")
    for name in failing:
        assert f"✗ {name} " in text
    assert "not in the graph of the loss" in text
    assert "✓ 2 others: finite, non-zero gradient" in text
    assert "GP107 parameter_without_grad" in text and "gradprobe explain GP107" in text


def test_under_a_recording_the_detach_line_and_the_unused_module_are_named() -> None:
    model = Detached()
    with record():
        loss = model(torch.randn(3, 4)).sum()
        error = failure(assert_grad_flows, model, loss)
    by_name = {f.parameter: f for f in error.findings}
    cut = by_name["features.0.weight"]
    assert [(loc.file, loc.line, loc.role) for loc in cut.locations] == [
        (HERE, line_of("DETACH"), "cause")
    ]
    assert "cut at test_testing.py:" in cut.message and "by .detach()" in cut.message
    assert "unused: module 'unused' never ran" in by_name["unused.weight"].message
    assert by_name["unused.weight"].locations == ()


def test_frozen_parameter_fails_unless_left_out() -> None:
    model = nn.Linear(3, 2)
    model.bias.requires_grad_(False)
    error = failure(assert_grad_flows, model, model(torch.ones(1, 3)).sum())
    assert [f.parameter for f in error.findings] == ["bias"]
    assert "frozen: requires_grad=False" in str(error)
    model.zero_grad()
    assert_grad_flows(model, model(torch.ones(1, 3)).sum(), params=["weight"])
    assert_grad_flows(model, params=[model.weight])  # the .grad just computed


def test_glob_patterns_select_parameters() -> None:
    model = Detached()
    error = failure(assert_grad_flows, model, model(torch.randn(2, 4)).sum(), params=["feat*"])
    assert [f.parameter for f in error.findings] == ["features.0.weight", "features.0.bias"]
    assert "2 of 2 parameters" in str(error)


def test_nan_gradient_names_the_node_that_made_it() -> None:
    w = nn.Parameter(torch.tensor([1.0, 2.0]))
    x = torch.tensor([0.0, 1.0])
    # sqrt'(0) is infinite: the forward is finite, the gradient of w[0] is inf * 0 = NaN.
    loss = torch.sqrt(w * x).sum()
    assert torch.isfinite(loss)
    error = failure(assert_grad_flows, {"w": w}, loss)
    (found,) = error.findings
    assert (found.code, found.parameter, found.node) == ("GP202", "w", "SqrtBackward0")
    # d sqrt(w x) / dw = x / (2 sqrt(w x)): 1 / (2 sqrt 2) for w=2, x=1.
    assert torch.isnan(w.grad[0]) and w.grad[1] == pytest.approx(2**-1.5)  # type: ignore[index]
    assert "✗ w (2): NaN/inf in its gradient; the first backward node" in str(error)


def test_nan_from_the_forward_pass_gets_the_recorded_line() -> None:
    w = nn.Parameter(torch.tensor([1.0, -1.0]))
    with record():
        loss = torch.sqrt(w).sum()  # FORWARD NAN: sqrt(-1), and its gradient 0.5/sqrt(-1)
        error = failure(assert_grad_flows, {"w": w}, loss)
    # Ours (parameter w), then the recording's: the forward NaN and its own GP202.
    assert [f.code for f in error.findings] == ["GP202", "GP201", "GP202"]
    assert error.findings[0].parameter == "w"
    forward = error.findings[1]
    assert forward.cause is not None and forward.cause.line == line_of(
        "FORWARD NAN: sqrt(-1), and its gradient 0.5/sqrt(-1)"
    )
    assert "  note (recorded): The first NaN of the forward pass came from sqrt" in str(error)
    # Without a recording the failure still says the loss itself is NaN.
    error = failure(assert_grad_flows, {"w": w}, torch.sqrt(w).sum())
    assert "note: the loss itself is NaN or infinite" in str(error)


def test_gradient_zero_everywhere_fails_and_atol_sets_the_bound() -> None:
    model = nn.Linear(3, 2)
    error = failure(assert_grad_flows, model, (model(torch.ones(4, 3)) * 0).sum())
    assert [(f.code, f.parameter) for f in error.findings] == [
        ("GP120", "weight"),
        ("GP120", "bias"),
    ]
    assert "gradient is zero everywhere (|grad| == 0)" in str(error)


def test_conv_bias_before_batchnorm_gets_rounding_noise_only() -> None:
    net = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4))
    x = torch.randn(2, 3, 6, 6)
    # BatchNorm subtracts each channel's batch mean: the conv bias cancels out exactly.
    assert_grad_flows(net, net(x).sin().sum())  # atol=0: the noise is not zero
    noise = net[0].bias.grad.abs().max()  # type: ignore[union-attr]
    assert 0 < noise < 1e-3 < net[0].weight.grad.abs().max()  # type: ignore[union-attr]
    net.zero_grad()
    error = failure(assert_grad_flows, net, net(x).sin().sum(), atol=1e-3)
    assert [f.parameter for f in error.findings] == ["0.bias"]
    assert "<= atol=0.001" in str(error)
    net.zero_grad()
    assert_grad_flows(net, net(x).sin().sum(), params=["0.weight", "1.*"], atol=1e-3)


def test_existing_grads_are_set_aside_and_added_back() -> None:
    model = Detached()
    twin = copy.deepcopy(model)
    x = torch.randn(3, 4)
    for net in (model, twin):
        net(x).sum().backward()  # .grad of features.* stays None, head.* is set
        net.features[0].weight.grad = torch.ones(5, 4)  # a stale gradient
    before = model.features[0].weight.grad
    error = failure(assert_grad_flows, model, model(x).sum())
    # The stale .grad of features.0.weight does not hide that this loss gives it none.
    assert "features.0.weight" in {f.parameter for f in error.findings}
    twin(x).sum().backward()
    for (name, p), q in zip(model.named_parameters(), twin.parameters(), strict=True):
        if q.grad is None:
            assert p.grad is None, name
        else:
            assert p.grad is not None and torch.equal(p.grad, q.grad), name
    assert model.features[0].weight.grad is before


def test_without_loss_existing_grads_are_checked() -> None:
    model = Detached()
    model(torch.randn(2, 4)).sum().backward()
    assert_grad_flows(model, params=["head.*"])
    error = failure(assert_grad_flows, model, params=["unused.bias"])
    assert "no .grad: unused in forward, cut from the loss" in str(error)
    assert "backward() was not called" in str(error)


def test_a_loss_without_grad_fn_fails_with_the_preflight_finding() -> None:
    model = nn.Linear(2, 1)
    with torch.no_grad():
        loss = model(torch.ones(1, 2)).sum()
    error = failure(assert_grad_flows, model, loss)
    assert [f.code for f in error.findings] == ["GP104"]
    assert "backward() from the loss would fail" in str(error)


@pytest.mark.parametrize(
    ("args", "kwargs", "kind", "match"),
    [
        (("model",), {}, GradprobeTypeError, r"nn.Module or a \{name: tensor\} mapping"),
        ((nn.ReLU(),), {}, GradprobeValueError, "has no parameters"),
        ((nn.Linear(1, 1), torch.ones(2)), {}, GradprobeValueError, "needs a scalar loss"),
        ((nn.Linear(1, 1), 3.0), {}, GradprobeTypeError, "must be a tensor or None"),
        ((nn.Linear(1, 1),), {"params": ["wieght"]}, GradprobeValueError, "weight, bias"),
        ((nn.Linear(1, 1),), {"params": [torch.ones(1)]}, GradprobeValueError, "not one of"),
        ((nn.Linear(1, 1),), {"params": [3]}, GradprobeTypeError, "names or tensors"),
        ((nn.Linear(1, 1),), {"params": []}, GradprobeValueError, "params= is empty"),
        ((nn.Linear(1, 1),), {"atol": -1.0}, GradprobeValueError, "atol must be"),
        ((nn.Linear(1, 1),), {"atol": True}, GradprobeTypeError, "atol must be"),
        (({"w": 1.0},), {}, GradprobeTypeError, "map names to tensors"),
    ],
)
def test_bad_arguments_say_what_to_pass(args, kwargs, kind, match) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(kind, match=match) as info:
        assert_grad_flows(*args, **kwargs)
    assert isinstance(info.value, GradprobeError)


# -- assert_grads_finite ------------------------------------------------------------------------


def test_grads_finite_counts_each_kind_of_bad_value() -> None:
    w = torch.zeros(5, requires_grad=True)
    b = torch.zeros(2, requires_grad=True)
    w.grad = torch.tensor([float("nan"), float("inf"), float("inf"), -float("inf"), 1.0])
    b.grad = torch.tensor([1.0, 2.0])
    error = failure(assert_grads_finite, {"w": w, "b": b})
    (found,) = error.findings
    assert (found.code, found.parameter) == ("GP202", "w")
    assert dict(found.details) == {"nan": 1, "posinf": 2, "neginf": 1, "numel": 5}
    assert "✗ w: 1 NaN, 2 +inf, 1 -inf of 5 values" in str(error)
    assert "1 of 2 gradients has NaN or infinite values" in str(error)
    assert_grads_finite(b)
    assert_grads_finite([b, torch.ones(1)])  # tensors without .grad are skipped


def test_grads_finite_on_a_module_after_backward() -> None:
    model = nn.Linear(2, 1)
    (model(torch.tensor([[1.0, 0.0]])) * float("inf")).sum().backward()
    error = failure(assert_grads_finite, model)
    assert {f.parameter for f in error.findings} == {"weight", "bias"}


def test_grads_finite_with_no_grad_at_all_fails() -> None:
    error = failure(assert_grads_finite, nn.Linear(2, 2))
    assert "none of the 2 tensors has a .grad" in str(error) and error.findings == ()
    with pytest.raises(GradprobeTypeError, match="index 1"):
        assert_grads_finite([torch.ones(1), "x"])  # type: ignore[list-item]


# -- leaves -------------------------------------------------------------------------------------


def test_is_leaf_explains_a_cast_after_requires_grad() -> None:
    assert_is_leaf(torch.ones(2, requires_grad=True))
    a = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True).float()
    error = failure(assert_is_leaf, a, "a")
    (found,) = error.findings
    assert (found.code, found.tensor) == ("GP106", "a")
    assert "a is not a leaf: it was produced by ToCopyBackward0" in str(error)
    assert ".requires_grad_() after the conversion" in found.hint
    with pytest.raises(GradprobeTypeError):
        assert_is_leaf([1.0])  # type: ignore[arg-type]


def test_not_leaf_says_which_kind_of_leaf() -> None:
    w = torch.ones(2, requires_grad=True)
    assert_not_leaf(w * 2, "y")
    assert "requires grad but has no grad_fn" in str(failure(assert_not_leaf, w, "w"))
    with torch.no_grad():
        y = w * 2
    assert "does not require grad" in str(failure(assert_not_leaf, y, "y"))


# -- assert_no_inplace_conflicts ----------------------------------------------------------------


def test_inplace_conflict_is_found_before_backward() -> None:
    a = torch.ones(5, requires_grad=True)
    b = a + 2
    loss = (b * b).mean()
    assert_no_inplace_conflicts(loss)
    b[0] = 1000.0
    error = failure(assert_no_inplace_conflicts, loss)
    (found,) = error.findings
    assert (found.code, found.node, found.details["slots"]) == (
        "GP101",
        "MulBackward0",
        ["other", "self"],
    )
    assert str(error).startswith("assert_no_inplace_conflicts: 1 tensor saved for backward")


def test_inplace_conflict_under_a_recording_names_the_writing_line() -> None:
    with record():
        a = torch.ones(5, requires_grad=True)
        b = a.sigmoid()
        loss = b.sum()
        b.mul_(2)  # WRITE
        error = failure(assert_no_inplace_conflicts, loss)
    (found,) = error.findings
    cause = found.cause
    assert cause is not None and (cause.file, cause.line) == (HERE, line_of("WRITE"))
    assert f"overwritten at line {line_of('WRITE')} by mul_" in found.message


def test_write_through_data_is_found_under_a_recording() -> None:
    with record():
        x = torch.ones(3, requires_grad=True)
        y = x.sigmoid()
        loss = y.sum()
        y.data.mul_(2)  # DATA WRITE
        assert x._version == 0 and y._version == 0  # .data bypasses the version counter
        error = failure(assert_no_inplace_conflicts, loss)
    assert [f.code for f in error.findings] == ["GP108"]
    cause = error.findings[0].cause
    assert cause is not None and cause.line == line_of("DATA WRITE")
    assert_no_inplace_conflicts(loss)  # without a recording nothing can see it


def test_optimizer_step_before_backward_names_the_parameter() -> None:
    model = nn.Linear(3, 1)
    # addmm saves weight.t() (to compute the input's gradient): a view sharing the version.
    loss = model(torch.ones(2, 3, requires_grad=True)).sum()
    with torch.no_grad():
        model.weight.add_(1.0)
    error = failure(assert_no_inplace_conflicts, loss, model=model)
    assert {(f.code, f.parameter) for f in error.findings} == {("GP109", "weight")}


def test_a_freed_graph_is_not_an_inplace_conflict() -> None:
    x = torch.ones(3, requires_grad=True)
    loss = (x.exp() * 2).sum()
    loss.backward()
    assert_no_inplace_conflicts(loss)


# -- assert_gradcheck ---------------------------------------------------------------------------


class WrongSquare(Function):
    @staticmethod
    def forward(ctx, x):  # type: ignore[no-untyped-def, override]
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):  # type: ignore[no-untyped-def, override]  # WRONG BACKWARD
        (x,) = ctx.saved_tensors
        return grad * x  # should be 2 * x


class RightSquare(Function):
    @staticmethod
    def forward(ctx, x):  # type: ignore[no-untyped-def, override]
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):  # type: ignore[no-untyped-def, override]
        (x,) = ctx.saved_tensors
        return 2 * grad * x


def inputs() -> tuple[torch.Tensor]:
    return (torch.rand(3, dtype=torch.float64, requires_grad=True) + 0.5,)


def test_gradcheck_names_the_wrong_function_and_its_backward_line() -> None:
    def model(x: torch.Tensor) -> torch.Tensor:
        return RightSquare.apply(x.sin()) + WrongSquare.apply(x.cos())  # APPLY

    error = failure(assert_gradcheck, model, inputs())
    (found,) = error.findings
    assert (found.code, found.node) == ("GP121", "WrongSquareBackward")
    assert [(loc.role, loc.file, loc.line) for loc in found.locations] == [
        ("cause", HERE, line_of("WRONG BACKWARD")),
        ("created", HERE, line_of("APPLY")),
    ]
    text = str(error)
    assert "✗ custom autograd.Function WrongSquare: its backward alone fails gradcheck" in text
    assert "gradcheck reported:\n  Jacobian mismatch for output 0 with respect to input 0" in text
    assert "Function RightSquare" not in text
    assert_gradcheck(lambda x: RightSquare.apply(x.sin()), inputs())


def test_gradcheck_names_a_hook_that_changes_the_gradient() -> None:
    def scale_grad(grad: torch.Tensor) -> torch.Tensor:  # SCALE HOOK
        return grad * 3

    def watch_grad(grad: torch.Tensor) -> None:
        return None

    def model(x: torch.Tensor) -> torch.Tensor:
        y = x.sin()
        y.register_hook(watch_grad)
        y.register_hook(scale_grad)  # REGISTER
        return y * 2

    original = torch.Tensor.register_hook
    error = failure(assert_gradcheck, model, inputs())
    assert torch.Tensor.register_hook is original
    (found,) = error.findings
    assert found.details["kind"] == "tensor_hook"
    assert [(loc.role, loc.line) for loc in found.locations] == [
        ("cause", line_of("SCALE HOOK")),
        ("registered", line_of("REGISTER")),
    ]
    assert "✗ tensor hook" in str(error) and "scale_grad" in str(error)
    assert "watch_grad" not in str(error)


def test_gradcheck_names_a_module_backward_hook_and_restores_it() -> None:
    layer = nn.Linear(3, 2).double()

    def double_input_grad(module, grad_input, grad_output):  # type: ignore[no-untyped-def]
        return (grad_input[0] * 2,)

    handle = layer.register_full_backward_hook(double_input_grad)
    hooks = layer._backward_hooks
    before = list(hooks.items())
    error = failure(
        assert_gradcheck, layer, (torch.rand(1, 3, dtype=torch.float64, requires_grad=True),)
    )
    (found,) = error.findings
    assert found.details["kind"] == "module_hook"
    assert found.message.startswith("backward hook on module 'Linear' ")
    assert "double_input_grad: gradcheck passes once this hook is left out" in found.message
    assert layer._backward_hooks is hooks and list(hooks.items()) == before
    handle.remove()
    assert_gradcheck(layer, (torch.rand(1, 3, dtype=torch.float64, requires_grad=True),))


def test_gradcheck_names_a_hook_on_the_input() -> None:
    (x,) = inputs()
    handle = x.register_hook(lambda grad: grad + 1)
    error = failure(assert_gradcheck, torch.sin, (x,))
    assert [f.details["kind"] for f in error.findings] == ["input_hook"]
    assert error.findings[0].message.startswith("hook on input 0 ")
    assert "<lambda>: gradcheck passes once" in error.findings[0].message
    assert len(x._backward_hooks) == 1  # type: ignore[attr-defined]
    handle.remove()


def test_gradcheck_without_a_culprit_says_builtins_disagree() -> None:
    x = torch.zeros(2, dtype=torch.float64, requires_grad=True)  # relu at its kink
    error = failure(assert_gradcheck, torch.relu, (x,))
    assert error.findings == ()
    assert "no custom autograd.Function or backward hook is involved" in str(error)


def test_gradcheck_restores_function_apply_and_rejects_bad_input() -> None:
    apply = inspect.getattr_static(Function, "apply")
    failure(assert_gradcheck, lambda x: WrongSquare.apply(x), inputs())
    assert inspect.getattr_static(Function, "apply") is apply
    with pytest.raises(GradprobeValueError, match="requires_grad=True"):
        assert_gradcheck(torch.sin, (torch.ones(2, dtype=torch.float64),))
    with pytest.raises(GradprobeTypeError, match="needs a function"):
        assert_gradcheck("sin", inputs())  # type: ignore[arg-type]


def _double() -> torch.Tensor:
    return torch.rand(3, dtype=torch.float64, requires_grad=True)


@pytest.mark.parametrize(
    ("fn", "given", "kind", "match"),
    [
        (
            torch.sin,
            lambda: None,
            GradprobeTypeError,
            r"takes a tensor or a tuple of inputs, got None \(a NoneType\)",
        ),
        (torch.sin, lambda: 3.0, GradprobeTypeError, r"got 3.0 \(a float\)"),
        (
            torch.sin,
            lambda: (torch.rand(3, dtype=torch.float64, device="meta", requires_grad=True),),
            GradprobeValueError,
            r"input 0 \(shape \(3,\)\) is on the meta device, with no values",
        ),
        (
            torch.sin,
            lambda: (_double(), _double().detach().to_sparse().requires_grad_()),
            GradprobeValueError,
            r"input 1 \(shape \(3,\)\) is a torch.sparse_coo tensor. Pass a dense float64",
        ),
        (
            lambda x: {"y": x * 2},
            lambda: (_double(),),
            GradprobeTypeError,
            r"fn must return a tensor or a tuple of tensors, returned a dict with keys \['y'\]",
        ),
        (lambda x: None, lambda: (_double(),), GradprobeTypeError, r"returned None \(a NoneType\)"),
        (
            lambda x: (x, "note"),
            lambda: (_double(),),
            GradprobeTypeError,
            r"returned a tuple\. Wrap it",
        ),
    ],
    ids=["none", "float", "meta", "sparse", "dict-output", "none-output", "str-in-output"],
)
def test_gradcheck_says_what_it_was_given_and_what_it_needs(fn, given, kind, match) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(kind, match=match) as info:
        assert_gradcheck(fn, given())
    assert isinstance(info.value, GradprobeError)


def test_gradcheck_accepts_a_list_of_outputs_and_inputs() -> None:
    x, y = _double(), _double()
    assert_gradcheck(lambda a, b: [a * b, a.sin()], [x, y])


# -- assert_hook_order --------------------------------------------------------------------------


def test_hook_order_passes_and_fails_with_both_orders() -> None:
    layer = nn.Linear(2, 2)
    fired: list[str] = []

    def before_forward(module, args):  # type: ignore[no-untyped-def]
        fired.append("before_forward")

    def after_backward(module, grad_input, grad_output):  # type: ignore[no-untyped-def]
        fired.append("after_backward")

    handles = [
        layer.register_forward_pre_hook(before_forward),
        layer.register_full_backward_hook(after_backward),
    ]

    def step() -> None:
        x = torch.ones(1, 2, requires_grad=True)
        out = layer(x)

        def on_output(grad: torch.Tensor) -> None:
            fired.append("on_output")

        out.register_hook(on_output)
        out.sum().backward()

    step()
    assert fired == ["before_forward", "on_output", "after_backward"]  # plain torch
    assert_hook_order(step, fired)
    assert_hook_order(step, ["before_forward", "step.on_output"])  # full name or last part
    error = failure(assert_hook_order, step, ["after_backward", "on_output", "never_registered"])
    text = str(error)
    assert "  expected: after_backward → on_output → never_registered" in text
    assert "  fired:    on_output → after_backward" in text
    assert "  never fired: never_registered" in text
    assert "before_forward" in text  # every hook call is listed
    for handle in handles:
        handle.remove()
    with pytest.raises(GradprobeTypeError, match="list of hook names"):
        assert_hook_order(step, "on_output")
    with pytest.raises(GradprobeTypeError, match="function to run"):
        assert_hook_order(None, [])  # type: ignore[arg-type]


def test_backward_that_raises_leaves_grads_as_before() -> None:
    class Boom(Function):
        @staticmethod
        def forward(ctx, x):  # type: ignore[no-untyped-def, override]
            return x * 1

        @staticmethod
        def backward(ctx, grad):  # type: ignore[no-untyped-def, override]
            raise RuntimeError("boom")

    w = nn.Parameter(torch.ones(2))
    stale = torch.full((2,), 7.0)
    w.grad = stale
    with pytest.raises(RuntimeError, match="boom"):
        assert_grad_flows({"w": w}, Boom.apply(w).sum())
    assert w.grad is stale and torch.equal(stale, torch.full((2,), 7.0))


def test_gradcheck_restores_its_patches_when_fn_raises() -> None:
    apply = inspect.getattr_static(Function, "apply")
    register = torch.Tensor.register_hook

    def fn(x: torch.Tensor) -> torch.Tensor:
        # Raise only in gradprobe's diagnostic run, while its patches are installed.
        if inspect.getattr_static(Function, "apply") is not apply:
            raise KeyError("only under the patch")
        return WrongSquare.apply(x)

    with pytest.raises(KeyError, match="only under the patch"):
        assert_gradcheck(fn, inputs())
    assert inspect.getattr_static(Function, "apply") is apply
    assert torch.Tensor.register_hook is register


def test_nothing_is_kept_alive_and_deep_graphs_are_safe() -> None:
    import gc
    import weakref

    def run() -> tuple[list[str], weakref.ref[torch.Tensor]]:
        w = nn.Parameter(torch.ones(3))
        y = w
        for _ in range(3000):  # deeper than one band of _deepfree: held while traced
            y = y * 1.0
        loss = (y * 0).sum()
        try:
            assert_grad_flows({"w": w}, loss)
        except GradprobeAssertionError as error:
            return [f.code for f in error.findings], weakref.ref(loss)
        raise AssertionError("expected a zero gradient")

    codes, loss_ref = run()
    gc.collect()
    assert codes == ["GP120"] and loss_ref() is None


# -- the error ----------------------------------------------------------------------------------


def test_assertion_error_is_both_families_and_pickles() -> None:
    model = Detached()
    error = failure(assert_grad_flows, model, model(torch.randn(1, 4)).sum(), params=["unused.*"])
    assert isinstance(error, AssertionError) and isinstance(error, GradprobeError)
    copy_ = pickle.loads(pickle.dumps(error))
    assert str(copy_) == str(error) and copy_.findings == error.findings
