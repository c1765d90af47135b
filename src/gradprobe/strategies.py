"""Hypothesis strategies for gradient tests: small models, their inputs, small graphs, hooks.

Needs the ``test`` extra (``pip install gradprobe[test]``, which brings hypothesis);
importing this module without hypothesis raises :class:`MissingDependencyError`.

Every strategy draws plain numbers (sizes, seeds) and builds torch objects from them, so
examples are reproducible and hypothesis shrinks towards small shapes. Weights and inputs
come from a seeded ``torch.Generator``; the global RNG is not touched.

Example:
    >>> import torch
    >>> from hypothesis import given, settings
    >>> from gradprobe import strategies as gps
    >>> @settings(max_examples=5, deadline=None)
    ... @given(gps.mlps(), gps.scale_hooks())
    ... def test_scaling_the_output_grad_scales_every_grad(model, hook):
    ...     seed = torch.Generator().manual_seed(0)  # not the global RNG: reproducible
    ...     x = torch.randn(3, model[0].in_features, dtype=torch.float64, generator=seed)
    ...     out = model(x)
    ...     ref = torch.autograd.grad(out.sum(), list(model.parameters()))
    ...     out = model(x)
    ...     out.register_hook(hook)
    ...     got = torch.autograd.grad(out.sum(), list(model.parameters()))
    ...     assert all(torch.allclose(g, hook(r)) for g, r in zip(got, ref))
    >>> test_scaling_the_output_grad_scales_every_grad()
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import torch

from gradprobe.errors import (
    GradprobeTypeError,
    GradprobeValueError,
    MissingDependencyError,
    describe,
)

try:
    from hypothesis import strategies as st
except ImportError as error:  # pragma: no cover - exercised in a subprocess test
    msg = (
        "gradprobe.strategies needs hypothesis, which is not installed. Install the test "
        "extra: pip install gradprobe[test]"
    )
    raise MissingDependencyError(msg) from error

__all__ = [
    "ACTIVATIONS",
    "GradHook",
    "GraphCase",
    "HookKind",
    "MissingDependencyError",
    "conv_layers",
    "conv_nets",
    "grad_hooks",
    "graphs",
    "inputs_for",
    "linear_layers",
    "mlps",
    "scale_hooks",
]

HookKind = Literal["scale", "clamp", "zero", "identity", "shift"]

ACTIVATIONS: dict[str, Callable[[], torch.nn.Module]] = {
    "relu": torch.nn.ReLU,
    "tanh": torch.nn.Tanh,
    "sigmoid": torch.nn.Sigmoid,
    "gelu": torch.nn.GELU,
}
"""Activation modules :func:`mlps` and :func:`conv_nets` can put between layers."""

_SEEDS = st.integers(min_value=0, max_value=2**31 - 1)


def _generator(seed: int) -> torch.Generator:
    generator = torch.Generator()
    generator.manual_seed(seed)
    return generator


def _own_rng() -> Any:
    """Module constructors initialize weights from the global RNG: fork it, so drawing a
    model does not change the random numbers the test sees afterwards."""
    return torch.random.fork_rng(devices=[])


def _init(module: torch.nn.Module, seed: int, dtype: torch.dtype) -> torch.nn.Module:
    """Deterministic weights from ``seed`` without touching the global RNG."""
    generator = _generator(seed)
    module.to(dtype)
    with torch.no_grad():
        for param in module.parameters():
            fan_in = param.shape[1] if param.dim() > 1 else param.shape[0]
            for size in param.shape[2:]:
                fan_in *= size
            bound = 1.0 / math.sqrt(max(fan_in, 1))
            param.copy_(
                torch.rand(param.shape, generator=generator, dtype=dtype) * 2 * bound - bound
            )
    return module


# -- hooks ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class GradHook:
    """A gradient hook with a known effect, usable as ``tensor.register_hook(hook)``.

    ``scale``: ``grad * value``; ``clamp``: ``grad.clamp(-value, value)``; ``zero``:
    ``zeros_like(grad)``; ``identity``: returns None (grad unchanged); ``shift``:
    ``grad + value``. :meth:`apply` is the same map, for computing expected gradients.
    """

    kind: HookKind
    value: float = 1.0

    def apply(self, grad: torch.Tensor) -> torch.Tensor:
        """What the hook turns ``grad`` into."""
        if self.kind == "scale":
            return grad * self.value
        if self.kind == "clamp":
            return grad.clamp(-self.value, self.value)
        if self.kind == "zero":
            return torch.zeros_like(grad)
        if self.kind == "shift":
            return grad + self.value
        return grad

    def __call__(self, grad: torch.Tensor) -> torch.Tensor | None:
        return None if self.kind == "identity" else self.apply(grad)

    def __repr__(self) -> str:
        if self.kind in ("zero", "identity"):
            return f"GradHook({self.kind!r})"
        return f"GradHook({self.kind!r}, {self.value!r})"


def scale_hooks(*, min_exponent: int = -3, max_exponent: int = 3) -> st.SearchStrategy[GradHook]:
    """Hooks that scale by ``±2**n``: exact in floating point, so scaled gradients can be
    compared with ``torch.equal``."""
    if min_exponent > max_exponent:
        msg = (
            f"scale_hooks(min_exponent={min_exponent!r}, max_exponent={max_exponent!r}): the "
            "minimum must not exceed the maximum."
        )
        raise GradprobeValueError(msg)
    return st.builds(
        lambda exponent, sign: GradHook("scale", sign * 2.0**exponent),
        st.integers(min_exponent, max_exponent),
        st.sampled_from((1.0, -1.0)),
    )


def grad_hooks(
    kinds: Sequence[HookKind] = ("scale", "clamp", "zero", "identity", "shift"),
) -> st.SearchStrategy[GradHook]:
    """Hooks of the given kinds with small exact parameters (powers of two, multiples of
    1/8)."""
    unknown = set(kinds) - {"scale", "clamp", "zero", "identity", "shift"}
    if not kinds or unknown:
        msg = (
            f"grad_hooks(kinds={describe(kinds)}): pick from 'scale', 'clamp', 'zero', "
            "'identity', 'shift'."
        )
        raise GradprobeValueError(msg)
    options: list[st.SearchStrategy[GradHook]] = []
    if "scale" in kinds:
        options.append(scale_hooks())
    if "clamp" in kinds:
        options.append(st.integers(1, 16).map(lambda n: GradHook("clamp", n / 64)))
    if "zero" in kinds:
        options.append(st.just(GradHook("zero", 0.0)))
    if "identity" in kinds:
        options.append(st.just(GradHook("identity")))
    if "shift" in kinds:
        options.append(st.integers(-8, 8).map(lambda n: GradHook("shift", n / 8)))
    return st.one_of(options)


# -- modules --------------------------------------------------------------------------------


def linear_layers(
    *,
    max_features: int = 6,
    bias: bool | None = None,
    dtype: torch.dtype = torch.float64,
) -> st.SearchStrategy[torch.nn.Linear]:
    """``nn.Linear(in, out)`` with ``1 <= in, out <= max_features``; ``bias`` drawn unless
    given."""
    _check_dtype("linear_layers", dtype)
    _positive("linear_layers", "max_features", max_features)
    biases = st.booleans() if bias is None else st.just(bias)

    def build(n_in: int, n_out: int, with_bias: bool, seed: int) -> torch.nn.Linear:
        with _own_rng():  # nn.Linear's own init would draw from the global RNG
            layer = torch.nn.Linear(n_in, n_out, bias=with_bias)
        _init(layer, seed, dtype)
        return layer

    sizes = st.integers(1, max_features)
    return st.builds(build, sizes, sizes, biases, _SEEDS)


def conv_layers(
    *,
    dims: Sequence[int] = (1, 2),
    max_channels: int = 4,
    max_kernel: int = 3,
    bias: bool | None = None,
    dtype: torch.dtype = torch.float64,
) -> st.SearchStrategy[torch.nn.Module]:
    """``nn.Conv1d`` / ``nn.Conv2d`` / ``nn.Conv3d`` with small channels, kernel, stride,
    padding and dilation."""
    _check_dtype("conv_layers", dtype)
    _positive("conv_layers", "max_channels", max_channels)
    _positive("conv_layers", "max_kernel", max_kernel)
    classes = {1: torch.nn.Conv1d, 2: torch.nn.Conv2d, 3: torch.nn.Conv3d}
    if not dims or any(d not in classes for d in dims):
        msg = f"conv_layers(dims={describe(dims)}): dims must be among 1, 2, 3."
        raise GradprobeValueError(msg)
    biases = st.booleans() if bias is None else st.just(bias)

    @st.composite
    def build(draw: Any) -> torch.nn.Module:
        dim = draw(st.sampled_from(tuple(dims)))
        n_in, n_out = draw(st.integers(1, max_channels)), draw(st.integers(1, max_channels))
        kernel = draw(st.integers(1, max_kernel))
        stride, padding = draw(st.integers(1, 2)), draw(st.integers(0, 1))
        dilation, with_bias = draw(st.integers(1, 2)), draw(biases)
        with _own_rng():
            layer = classes[dim](
                n_in,
                n_out,
                kernel,
                stride=stride,
                padding=padding,
                dilation=dilation,
                bias=with_bias,
            )
        _init(layer, draw(_SEEDS), dtype)
        return layer

    return build()


def mlps(
    *,
    min_layers: int = 1,
    max_layers: int = 4,
    max_width: int = 6,
    activations: Sequence[str] = ("relu", "tanh", "sigmoid"),
    dtype: torch.dtype = torch.float64,
) -> st.SearchStrategy[torch.nn.Sequential]:
    """``nn.Sequential`` of ``Linear`` layers with an activation module after each but the
    last; ``model[0].in_features`` is the input width."""
    _positive("mlps", "min_layers", min_layers)
    _positive("mlps", "max_width", max_width)
    if max_layers < min_layers:
        msg = f"mlps(min_layers={min_layers!r}, max_layers={max_layers!r}): max < min."
        raise GradprobeValueError(msg)
    _check_activations("mlps", activations)
    _check_dtype("mlps", dtype)

    @st.composite
    def build(draw: Any) -> torch.nn.Sequential:
        depth = draw(st.integers(min_layers, max_layers))
        widths = [draw(st.integers(1, max_width)) for _ in range(depth + 1)]
        layers: list[torch.nn.Module] = []
        for index in range(depth):
            with _own_rng():
                layers.append(torch.nn.Linear(widths[index], widths[index + 1]))
            if index < depth - 1 and activations:
                layers.append(ACTIVATIONS[draw(st.sampled_from(tuple(activations)))]())
        return _init(torch.nn.Sequential(*layers), draw(_SEEDS), dtype)  # type: ignore[return-value]

    return build()


def conv_nets(
    *,
    max_layers: int = 3,
    max_channels: int = 4,
    activations: Sequence[str] = ("relu", "tanh"),
    dtype: torch.dtype = torch.float64,
) -> st.SearchStrategy[torch.nn.Sequential]:
    """``nn.Sequential`` of ``Conv2d`` (kernel 1-3, padding keeping the size) and
    activations; ``model[0].in_channels`` is the input's channel count."""
    _positive("conv_nets", "max_layers", max_layers)
    _positive("conv_nets", "max_channels", max_channels)
    _check_activations("conv_nets", activations)
    _check_dtype("conv_nets", dtype)

    @st.composite
    def build(draw: Any) -> torch.nn.Sequential:
        depth = draw(st.integers(1, max_layers))
        channels = [draw(st.integers(1, max_channels)) for _ in range(depth + 1)]
        layers: list[torch.nn.Module] = []
        for index in range(depth):
            kernel = draw(st.sampled_from((1, 3)))
            with _own_rng():
                layers.append(
                    torch.nn.Conv2d(
                        channels[index], channels[index + 1], kernel, padding=kernel // 2
                    )
                )
            if index < depth - 1 and activations:
                layers.append(ACTIVATIONS[draw(st.sampled_from(tuple(activations)))]())
        return _init(torch.nn.Sequential(*layers), draw(_SEEDS), dtype)  # type: ignore[return-value]

    return build()


def inputs_for(
    module: torch.nn.Module,
    *,
    max_batch: int = 4,
    extra_dims: bool = False,
    requires_grad: bool = True,
) -> st.SearchStrategy[torch.Tensor]:
    """A random input batch that ``module`` accepts (batch size ``1..max_batch``).

    Knows ``nn.Linear`` (``(B, in)``, or ``(B, T, in)`` when ``extra_dims``), convolutions
    (``(B, C, *spatial)`` large enough for kernel, dilation and padding), and
    ``nn.Sequential`` whose first layer is one of those. Same dtype as the parameters.
    """
    _positive("inputs_for", "max_batch", max_batch)
    first = module
    while isinstance(first, torch.nn.Sequential) and len(first) > 0:
        first = first[0]
    param = next(module.parameters(), None)
    dtype = param.dtype if param is not None else torch.float64
    if isinstance(first, torch.nn.Linear):
        features = first.in_features

        def shape_of(batch: int, extra: int, grow: int) -> tuple[int, ...]:
            return (batch, extra, features) if extra else (batch, features)

    elif isinstance(first, torch.nn.modules.conv._ConvNd):
        conv = first

        def shape_of(batch: int, extra: int, grow: int) -> tuple[int, ...]:
            spatial = []
            for axis in range(len(conv.kernel_size)):
                pad = conv.padding[axis] if isinstance(conv.padding, tuple) else 0
                reach = conv.dilation[axis] * (conv.kernel_size[axis] - 1) + 1
                spatial.append(max(reach - 2 * int(pad), 1) + grow)
            return (batch, conv.in_channels, *spatial)

    else:
        msg = (
            f"inputs_for() knows Linear, convolutions and Sequential models starting with "
            f"one, got {describe(module)}; draw inputs for it yourself."
        )
        raise GradprobeValueError(msg)

    def build(batch: int, extra: int, grow: int, seed: int) -> torch.Tensor:
        shape = shape_of(batch, extra, grow)
        tensor = torch.randn(shape, generator=_generator(seed), dtype=dtype)
        return tensor.requires_grad_(requires_grad)

    extras = st.integers(1, 3) if extra_dims else st.just(0)
    return st.builds(build, st.integers(1, max_batch), extras, st.integers(0, 3), _SEEDS)


# -- graphs ---------------------------------------------------------------------------------

_UNARY = ("tanh", "sin", "sigmoid", "square", "half")
_BINARY = ("add", "sub", "mul")


def _unary(op: str, x: torch.Tensor) -> torch.Tensor:
    if op == "tanh":
        return torch.tanh(x)
    if op == "sin":
        return torch.sin(x)
    if op == "sigmoid":
        return torch.sigmoid(x)
    if op == "square":
        return x * x
    return x * 0.5


def _binary(op: str, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    if op == "add":
        return x + y
    if op == "sub":
        return x - y
    return x * y


@dataclass(frozen=True)
class GraphCase:
    """A small random differentiable program: leaves → ``hidden`` → a scalar loss.

    ``before`` builds ``hidden`` from the leaves; ``after`` builds the loss from
    ``hidden`` (and, unless ``only_through_hidden``, from the leaves again). Each op is
    ``(name, a, b)`` indexing the values made so far. Build it as often as needed:
    ``leaves = case.leaves(); hidden = case.hidden(leaves); loss = case.loss(hidden, leaves)``.
    """

    n_leaves: int
    shape: tuple[int, ...]
    before: tuple[tuple[str, int, int], ...]
    after: tuple[tuple[str, int, int], ...]
    only_through_hidden: bool
    seed: int

    def leaves(self, dtype: torch.dtype = torch.float64) -> list[torch.Tensor]:
        """Fresh leaf tensors that require grad (the same values on every call)."""
        _check_dtype("GraphCase.leaves", dtype)
        generator = _generator(self.seed)
        return [
            torch.randn(self.shape, generator=generator, dtype=dtype).requires_grad_()
            for _ in range(self.n_leaves)
        ]

    def hidden(self, leaves: Sequence[torch.Tensor]) -> torch.Tensor:
        """The intermediate value to hook."""
        pool = list(leaves)
        for op, a, b in self.before:
            x = pool[a % len(pool)]
            y = pool[b % len(pool)]
            pool.append(_unary(op, x) if op in _UNARY else _binary(op, x, y))
        return pool[-1] * 1.0 if len(pool) == len(leaves) else pool[-1]

    def loss(self, hidden: torch.Tensor, leaves: Sequence[torch.Tensor]) -> torch.Tensor:
        """A scalar depending on ``hidden`` (every op's first operand is the running value)."""
        others = [] if self.only_through_hidden else list(leaves)
        value = hidden
        for op, _, b in self.after:
            if op in _UNARY:
                value = _unary(op, value)
            else:
                other = others[b % len(others)] if others else value
                value = _binary(op, value, other)
        weights = torch.randn(self.shape, generator=_generator(self.seed + 1), dtype=value.dtype)
        return (value * weights).sum()

    def __repr__(self) -> str:
        return (
            f"GraphCase(leaves={self.n_leaves}, shape={self.shape}, before={list(self.before)}, "
            f"after={list(self.after)}, only_through_hidden={self.only_through_hidden})"
        )


def graphs(
    *,
    max_leaves: int = 3,
    max_ops: int = 5,
    only_through_hidden: bool | None = None,
) -> st.SearchStrategy[GraphCase]:
    """Small random programs with a hookable intermediate value; see :class:`GraphCase`.

    With ``only_through_hidden=True`` every leaf reaches the loss through ``hidden`` only,
    so a hook on ``hidden`` acts on the whole gradient of every leaf.
    """
    _positive("graphs", "max_leaves", max_leaves)
    _positive("graphs", "max_ops", max_ops)
    ops = st.tuples(st.sampled_from(_UNARY + _BINARY), st.integers(0, 63), st.integers(0, 63))
    through = st.booleans() if only_through_hidden is None else st.just(only_through_hidden)
    shapes = st.sampled_from(((3,), (2, 3), (4,)))
    return st.builds(
        GraphCase,
        st.integers(1, max_leaves),
        shapes,
        st.lists(ops, min_size=1, max_size=max_ops).map(tuple),
        st.lists(ops, min_size=0, max_size=max_ops).map(tuple),
        through,
        _SEEDS,
    )


def _positive(function: str, name: str, value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        msg = f"{function}({name}=...) must be a positive int, got {describe(value)}."
        raise GradprobeValueError(msg)


def _check_dtype(function: str, dtype: object) -> None:
    """Weights are drawn as real numbers: a floating dtype, refused at once rather than
    inside the first example hypothesis draws."""
    if not isinstance(dtype, torch.dtype):
        msg = (
            f"{function}(dtype=...) takes a torch.dtype, got {describe(dtype)}; e.g. "
            "dtype=torch.float64."
        )
        raise GradprobeTypeError(msg)
    if not dtype.is_floating_point:
        msg = (
            f"{function}(dtype={dtype}): weights and inputs need a floating-point dtype; "
            "use torch.float64 (what gradcheck wants) or torch.float32."
        )
        raise GradprobeValueError(msg)


def _check_activations(function: str, activations: Sequence[str]) -> None:
    unknown = [name for name in activations if name not in ACTIVATIONS]
    if unknown:
        msg = (
            f"{function}(activations={describe(activations)}): unknown {unknown!r}; pick "
            f"from {sorted(ACTIVATIONS)}."
        )
        raise GradprobeValueError(msg)
