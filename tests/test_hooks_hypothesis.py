"""Property tests of hook-modified gradients, on generated models and graphs.

Every expected gradient is computed by plain torch without the hook under test: a second
forward/backward of the same deterministic model or program, or an explicit
vector-Jacobian product through ``torch.autograd.grad`` with the analytically modified
output gradient. Scales are ``±2**n`` so that scaled gradients are exact in float64 and
compared with ``torch.equal``.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Sequence

import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gradprobe import strategies as gps
from gradprobe.hooks import explain

FAST = settings(max_examples=30, suppress_health_check=[HealthCheck.too_slow])


def _leaf_grads(
    case: gps.GraphCase, hooks: Sequence[gps.GradHook] = ()
) -> list[torch.Tensor | None]:
    leaves = case.leaves()
    hidden = case.hidden(leaves)
    for hook in hooks:
        hidden.register_hook(hook)
    case.loss(hidden, leaves).backward()
    return [leaf.grad for leaf in leaves]


def _vjp_with(case: gps.GraphCase, transform: object) -> list[torch.Tensor | None]:
    """Leaf grads when the gradient reaching ``hidden`` is ``transform(dL/dhidden)``,
    computed without any hook: dL/dhidden first, then the vector-Jacobian product."""
    leaves = case.leaves()
    hidden = case.hidden(leaves)
    loss = case.loss(hidden, leaves)
    (g_hidden,) = torch.autograd.grad(loss, hidden, retain_graph=True)
    modified = transform(g_hidden)  # type: ignore[operator]
    return list(torch.autograd.grad(hidden, leaves, grad_outputs=modified, allow_unused=True))


def _assert_same(got: Sequence[torch.Tensor | None], want: Sequence[torch.Tensor | None]) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        if w is None:
            assert g is None
        else:
            assert g is not None
            assert torch.equal(g, w), (g, w)


@FAST
@given(gps.graphs(only_through_hidden=True), gps.scale_hooks())
def test_scaling_hook_scales_every_upstream_leaf_grad(
    case: gps.GraphCase, hook: gps.GradHook
) -> None:
    reference = _leaf_grads(case)
    scaled = _leaf_grads(case, [hook])
    _assert_same(scaled, [None if r is None else r * hook.value for r in reference])


@FAST
@given(gps.graphs(only_through_hidden=False), gps.scale_hooks())
def test_scaling_hook_scales_only_the_path_through_the_hooked_tensor(
    case: gps.GraphCase, hook: gps.GradHook
) -> None:
    leaves = case.leaves()
    hidden = case.hidden(leaves)
    loss = case.loss(hidden, leaves)
    total = torch.autograd.grad(loss, leaves, retain_graph=True, allow_unused=True)
    (g_hidden,) = torch.autograd.grad(loss, hidden, retain_graph=True)
    through = torch.autograd.grad(hidden, leaves, grad_outputs=g_hidden, allow_unused=True)
    got = _leaf_grads(case, [hook])
    for g, t, p in zip(got, total, through, strict=True):
        if t is None:
            assert g is None
            continue
        via_hidden = p if p is not None else torch.zeros_like(t)
        expected = t + (hook.value - 1.0) * via_hidden
        assert g is not None
        torch.testing.assert_close(g, expected, rtol=1e-12, atol=1e-12)


@FAST
@given(gps.graphs(only_through_hidden=True), st.integers(1, 16))
def test_clamp_hook_gives_the_analytic_gradient(case: gps.GraphCase, sixteenths: int) -> None:
    bound = sixteenths / 16
    hook = gps.GradHook("clamp", bound)
    expected = _vjp_with(case, lambda g: g.clamp(-bound, bound))
    _assert_same(_leaf_grads(case, [hook]), expected)


@FAST
@given(gps.graphs(only_through_hidden=True))
def test_zero_hook_zeroes_every_upstream_leaf_grad(case: gps.GraphCase) -> None:
    reference = _leaf_grads(case)
    zeroed = _leaf_grads(case, [gps.GradHook("zero")])
    _assert_same(zeroed, [None if r is None else torch.zeros_like(r) for r in reference])


@FAST
@given(gps.graphs(only_through_hidden=True), st.lists(gps.grad_hooks(), min_size=2, max_size=4))
def test_hooks_on_one_tensor_compose_in_registration_order(
    case: gps.GraphCase, hooks: list[gps.GradHook]
) -> None:
    def composed(grad: torch.Tensor) -> torch.Tensor:
        return functools.reduce(lambda g, hook: hook.apply(g), hooks, grad)

    _assert_same(_leaf_grads(case, hooks), _vjp_with(case, composed))


@FAST
@given(gps.graphs(only_through_hidden=True))
def test_order_matters_for_non_commuting_hooks(case: gps.GraphCase) -> None:
    clamp, shift = gps.GradHook("clamp", 0.25), gps.GradHook("shift", 1.0)
    clamp_first = _leaf_grads(case, [clamp, shift])
    shift_first = _leaf_grads(case, [shift, clamp])
    _assert_same(clamp_first, _vjp_with(case, lambda g: g.clamp(-0.25, 0.25) + 1.0))
    _assert_same(shift_first, _vjp_with(case, lambda g: (g + 1.0).clamp(-0.25, 0.25)))


def _linear_positions(model: torch.nn.Sequential) -> list[int]:
    return [i for i, layer in enumerate(model) if isinstance(layer, torch.nn.Linear)]


def _grads(model: torch.nn.Module, x: torch.Tensor) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    model.zero_grad(set_to_none=True)
    x = x.detach().clone().requires_grad_()
    model(x).sum().backward()
    assert x.grad is not None
    return x.grad, {
        name: p.grad.clone() for name, p in model.named_parameters() if p.grad is not None
    }


@FAST
@given(gps.mlps(max_layers=4), gps.scale_hooks(), st.data())
def test_scaling_hook_on_an_activation_scales_upstream_params_only(
    model: torch.nn.Sequential, hook: gps.GradHook, data: st.DataObject
) -> None:
    x = data.draw(gps.inputs_for(model))
    position = data.draw(st.sampled_from(range(len(model))))

    def grads_with(scale: gps.GradHook) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        def on_output(module: torch.nn.Module, args: object, output: torch.Tensor) -> None:
            output.register_hook(scale)

        handle = model[position].register_forward_hook(on_output)
        try:
            return _grads(model, x)
        finally:
            handle.remove()

    # The reference goes through a scale-by-1 hook at the same place: any hook makes the
    # gradient there a fresh contiguous tensor instead of sum()'s stride-0 expansion, and
    # a matrix product over the two layouts can round differently.
    ref_x, ref = grads_with(gps.GradHook("scale", 1.0))
    got_x, got = grads_with(hook)
    assert torch.equal(got_x, ref_x * hook.value)
    for name, grad in got.items():
        index = int(name.split(".")[0])
        expected = ref[name] * hook.value if index <= position else ref[name]
        assert torch.equal(grad, expected), name


@FAST
@given(gps.mlps(min_layers=2, max_layers=4), gps.scale_hooks(), st.data())
def test_full_hook_new_grad_input_changes_upstream_but_not_own_params(
    model: torch.nn.Sequential, hook: gps.GradHook, data: st.DataObject
) -> None:
    x = data.draw(gps.inputs_for(model))
    position = data.draw(st.sampled_from(_linear_positions(model)))
    ref_x, ref = _grads(model, x)

    def new_grad_input(
        module: torch.nn.Module, grad_input: tuple[torch.Tensor, ...], grad_output: object
    ) -> tuple[torch.Tensor, ...]:
        return tuple(g * hook.value for g in grad_input)

    handle = model[position].register_full_backward_hook(new_grad_input)
    try:
        got_x, got = _grads(model, x)
    finally:
        handle.remove()
    assert torch.equal(got_x, ref_x * hook.value)
    for name, grad in got.items():
        index = int(name.split(".")[0])
        expected = ref[name] * hook.value if index < position else ref[name]
        assert torch.equal(grad, expected), name


def _identify(
    received: torch.Tensor | None,
    x: torch.Tensor,
    module: torch.nn.Module,
    grad_output: torch.Tensor,
) -> str:
    """The test's own identification of a tensor a legacy hook received."""
    if received is None:
        return "None"
    if x.grad is not None and received.shape == x.grad.shape and torch.allclose(received, x.grad):
        return "grad of input 0"
    for name, param in module.named_parameters():
        assert param.grad is not None
        # Transposed first, as explain() does: a symmetric gradient matches both ways, and
        # a legacy hook on Linear receives addmm's weight.t() gradient.
        transposed = param.grad.mT if param.dim() == 2 else None
        if (
            transposed is not None
            and received.shape == transposed.shape
            and torch.allclose(received, transposed)
        ):
            return f"grad of {name}, transposed"
        if received.shape == param.grad.shape and torch.allclose(received, param.grad):
            return f"grad of {name}"
    same_size = received.numel() == grad_output.numel()
    if same_size and torch.equal(received, grad_output.reshape(received.shape)):
        return "grad of the output, reshaped"
    return "?"


def _legacy_received(
    module: torch.nn.Module, x: torch.Tensor
) -> tuple[list[str], list[tuple[int, ...] | None]]:
    got: dict[str, tuple[torch.Tensor | None, ...]] = {}

    def hook(
        mod: torch.nn.Module, grad_input: tuple[torch.Tensor | None, ...], grad_output: object
    ) -> None:
        got["grad_input"] = grad_input

    module.zero_grad(set_to_none=True)
    handle = module.register_backward_hook(hook)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # the legacy hook's deprecation
            out = module(x)
        grad_output = torch.randn_like(out)
        out.backward(grad_output)
    finally:
        handle.remove()
    labels = [_identify(g, x, module, grad_output) for g in got["grad_input"]]
    shapes = [None if g is None else tuple(g.shape) for g in got["grad_input"]]
    return labels, shapes


@settings(max_examples=25, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.one_of(gps.linear_layers(), gps.conv_layers(dims=(1, 2))),
    st.booleans(),
    st.booleans(),
    st.data(),
)
def test_explain_reports_the_layout_a_legacy_hook_receives(
    module: torch.nn.Module, extra_dims: bool, input_grad: bool, data: st.DataObject
) -> None:
    is_linear = isinstance(module, torch.nn.Linear)
    x = data.draw(
        gps.inputs_for(module, extra_dims=extra_dims and is_linear, requires_grad=input_grad)
    )
    layout = explain(module, x)
    labels, shapes = _legacy_received(module, x.detach().clone().requires_grad_(input_grad))
    assert [slot.shape for slot in layout.legacy_grad_input] == shapes
    assert [slot.label for slot in layout.legacy_grad_input] == labels
    assert "?" not in labels
    # and the full hook always reports the input's gradient, or None without one
    expected_full = ["grad of input 0"] if input_grad else ["None"]
    assert [slot.label for slot in layout.full_grad_input] == expected_full
