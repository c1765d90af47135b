"""gradprobe.strategies: what the shipped strategies build, and the missing-extra error."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from gradprobe import strategies as gps
from gradprobe.errors import GradprobeError, GradprobeTypeError, GradprobeValueError


def test_without_hypothesis_the_error_names_the_extra() -> None:
    code = (
        "import sys; sys.modules['hypothesis'] = None\n"
        "try:\n"
        "    import gradprobe.strategies\n"
        "except ImportError as error:\n"
        "    from gradprobe.errors import GradprobeError\n"
        "    print(type(error).__name__, isinstance(error, GradprobeError), error)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert result.stdout.strip() == (
        "MissingDependencyError True gradprobe.strategies needs hypothesis, which is not "
        "installed. Install the test extra: pip install gradprobe[test]"
    )


def test_missing_dependency_error_is_a_gradprobe_import_error() -> None:
    assert issubclass(gps.MissingDependencyError, GradprobeError)
    assert issubclass(gps.MissingDependencyError, ImportError)


def test_grad_hooks_do_what_they_say() -> None:
    grad = torch.tensor([-2.0, -0.25, 0.5, 3.0])
    assert torch.equal(gps.GradHook("scale", -2.0)(grad), torch.tensor([4.0, 0.5, -1.0, -6.0]))  # type: ignore[arg-type]
    assert torch.equal(gps.GradHook("clamp", 0.5)(grad), torch.tensor([-0.5, -0.25, 0.5, 0.5]))  # type: ignore[arg-type]
    assert torch.equal(gps.GradHook("zero")(grad), torch.zeros(4))  # type: ignore[arg-type]
    assert torch.equal(gps.GradHook("shift", 0.25)(grad), torch.tensor([-1.75, 0.0, 0.75, 3.25]))  # type: ignore[arg-type]
    assert gps.GradHook("identity")(grad) is None
    assert torch.equal(gps.GradHook("identity").apply(grad), grad)
    assert repr(gps.GradHook("clamp", 0.5)) == "GradHook('clamp', 0.5)"


@settings(max_examples=20)
@given(gps.scale_hooks(min_exponent=-2, max_exponent=2))
def test_scale_hooks_are_signed_powers_of_two(hook: gps.GradHook) -> None:
    assert hook.kind == "scale"
    assert abs(hook.value) in (0.25, 0.5, 1.0, 2.0, 4.0)


@settings(max_examples=15)
@given(st.one_of(gps.mlps(), gps.conv_nets(), gps.linear_layers(), gps.conv_layers()), st.data())
def test_inputs_for_fit_the_drawn_model(model: torch.nn.Module, data: st.DataObject) -> None:
    x = data.draw(gps.inputs_for(model, max_batch=3))
    assert 1 <= x.shape[0] <= 3
    assert x.requires_grad and x.dtype == torch.float64
    out = model(x)
    assert out.shape[0] == x.shape[0]
    assert all(p.dtype == torch.float64 for p in model.parameters())


@settings(max_examples=10)
@given(gps.linear_layers(max_features=3), st.data())
def test_extra_dims_for_linear(layer: torch.nn.Linear, data: st.DataObject) -> None:
    x = data.draw(gps.inputs_for(layer, extra_dims=True, requires_grad=False))
    assert x.dim() == 3 and x.shape[-1] == layer.in_features and not x.requires_grad


@settings(max_examples=15)
@given(gps.graphs())
def test_graphs_rebuild_identically(case: gps.GraphCase) -> None:
    first, second = case.leaves(), case.leaves()
    assert all(torch.equal(a, b) for a, b in zip(first, second, strict=True))
    loss = case.loss(case.hidden(first), first)
    assert loss.dim() == 0 and loss.requires_grad
    assert torch.equal(loss, case.loss(case.hidden(second), second))


def test_models_are_reproducible_and_leave_the_global_rng_alone() -> None:
    torch.manual_seed(7)
    expected = torch.rand(2)
    torch.manual_seed(7)
    drawn: list[torch.nn.Module] = []

    @settings(max_examples=3, database=None, derandomize=True)
    @given(gps.mlps())
    def collect(model: torch.nn.Module) -> None:
        drawn.append(model)

    collect()
    assert torch.equal(torch.rand(2), expected)
    assert drawn


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: gps.mlps(max_width=0), "max_width"),
        (lambda: gps.mlps(min_layers=3, max_layers=2), "max < min"),
        (lambda: gps.mlps(activations=("swish",)), "unknown \\['swish'\\]"),
        (lambda: gps.conv_layers(dims=(4,)), "dims must be among 1, 2, 3"),
        (lambda: gps.grad_hooks(kinds=("double",)), "pick from"),  # type: ignore[arg-type]
        (lambda: gps.scale_hooks(min_exponent=2, max_exponent=1), "must not exceed"),
        (lambda: gps.inputs_for(torch.nn.Tanh()), "knows Linear, convolutions"),
        (lambda: gps.graphs(max_ops=0), "max_ops"),
    ],
)
def test_bad_arguments(make: object, match: str) -> None:
    with pytest.raises(GradprobeValueError, match=match):
        make()  # type: ignore[operator]


@pytest.mark.parametrize(
    "make",
    [gps.linear_layers, gps.conv_layers, gps.mlps, gps.conv_nets],
    ids=["linear_layers", "conv_layers", "mlps", "conv_nets"],
)
def test_a_non_float_dtype_is_refused_when_the_strategy_is_made(make: object) -> None:
    name = make.__name__  # type: ignore[attr-defined]
    with pytest.raises(
        GradprobeValueError,
        match=rf"^{name}\(dtype=torch.int64\): weights and inputs need a floating-point dtype",
    ):
        make(dtype=torch.int64)  # type: ignore[operator]
    with pytest.raises(
        GradprobeTypeError,
        match=rf"^{name}\(dtype=...\) takes a torch.dtype, got "
        r"'float64' \(a str\)",
    ):
        make(dtype="float64")  # type: ignore[operator]
    assert make(dtype=torch.float32) is not None  # type: ignore[operator]


@given(gps.graphs())
@settings(max_examples=3, deadline=None)
def test_graph_case_leaves_refuse_a_non_float_dtype(case: gps.GraphCase) -> None:
    with pytest.raises(GradprobeValueError, match=r"GraphCase.leaves\(dtype=torch.int32\)"):
        case.leaves(torch.int32)
    assert all(leaf.dtype == torch.float32 for leaf in case.leaves(torch.float32))
