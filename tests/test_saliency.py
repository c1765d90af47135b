"""gradprobe.saliency: guided backprop, gradient and Grad-CAM against hand-computed results.

The reference maps are built without autograd: convolutions and their adjoints are
written as explicit loops, ReLU masks are explicit boolean tensors, and the guided rule is
applied by hand (``clamp(min=0)`` of the incoming gradient, then the mask).
"""

from __future__ import annotations

import warnings
import weakref
from collections.abc import Callable
from typing import ClassVar

import pytest
import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

from gradprobe.errors import (
    GradprobeError,
    GradprobeTypeError,
    GradprobeValueError,
    GradprobeWarning,
)
from gradprobe.saliency import (
    SaliencyBlindSpotError,
    SaliencyMap,
    activations,
    grad_cam,
    gradient,
    guided_backprop,
)

# -- a 2-layer conv net and its hand-computed maps -------------------------------------------

K = 3  # kernel size


def conv(x: Tensor, w: Tensor) -> Tensor:
    """Valid cross-correlation, (C, H, W) * (O, C, K, K) -> (O, H-K+1, W-K+1), by loops."""
    out_h, out_w = x.shape[1] - K + 1, x.shape[2] - K + 1
    out = torch.zeros(w.shape[0], out_h, out_w, dtype=x.dtype)
    for o in range(w.shape[0]):
        for i in range(out_h):
            for j in range(out_w):
                out[o, i, j] = (x[:, i : i + K, j : j + K] * w[o]).sum()
    return out


def conv_adjoint(g: Tensor, w: Tensor, size: tuple[int, int]) -> Tensor:
    """The adjoint of :func:`conv`: spreads each output gradient over its input window."""
    out = torch.zeros(w.shape[1], *size, dtype=g.dtype)
    for o in range(w.shape[0]):
        for i in range(g.shape[1]):
            for j in range(g.shape[2]):
                out[:, i : i + K, j : j + K] += g[o, i, j] * w[o]
    return out


# Weights chosen so that both ReLU layers have units on and off, and the gradient arriving
# at the first ReLU has negative entries where its unit is on (guided != plain there).
W1 = torch.tensor(
    [
        [[[1.0, -1.0, 0.5], [0.0, 2.0, -1.0], [0.5, 0.0, -0.5]]],
        [[[-1.0, 0.5, 1.0], [1.0, -2.0, 0.5], [0.0, 1.0, 0.5]]],
    ],
    dtype=torch.float64,
)
W2 = torch.tensor(
    [
        [
            [[0.5, -1.0, 0.0], [1.0, 0.5, -0.5], [0.0, 1.0, 0.5]],
            [[-1.0, 0.5, 0.5], [0.0, -0.5, 1.0], [1.0, 0.0, -1.0]],
        ],
        [
            [[1.0, 0.0, -0.5], [-0.5, 1.0, 0.0], [0.5, -1.0, 1.0]],
            [[0.5, 1.0, -1.0], [1.0, 0.0, 0.5], [-0.5, 0.5, 0.0]],
        ],
        [
            [[-0.5, 0.5, 1.0], [0.0, -1.0, 0.5], [1.0, 0.5, 0.0]],
            [[1.0, -0.5, 0.0], [0.5, 1.0, -1.0], [0.0, -1.0, 0.5]],
        ],
    ],
    dtype=torch.float64,
)


def inputs(batch: int = 3) -> Tensor:
    generator = torch.Generator().manual_seed(1)
    return 0.4 * torch.randn(batch, 1, 7, 7, generator=generator, dtype=torch.float64)


def expected_map(x: Tensor, classes: list[int], *, guided: bool | tuple[bool, bool]) -> Tensor:
    """d score / d x of relu(conv2(relu(conv1(x)))) summed over space, by hand; ``guided``
    says at which ReLUs (first, second) the guided rule applies."""
    guided1, guided2 = (guided, guided) if isinstance(guided, bool) else guided
    maps = []
    for sample, c in zip(x, classes, strict=True):
        z1 = conv(sample, W1)
        m1 = z1 > 0
        z2 = conv(z1 * m1, W2)
        m2 = z2 > 0
        g_r2 = torch.zeros_like(z2)
        g_r2[c] = 1.0
        g_z2 = (g_r2.clamp(min=0) if guided2 else g_r2) * m2
        g_a1 = conv_adjoint(g_z2, W2, tuple(z1.shape[1:]))
        g_z1 = (g_a1.clamp(min=0) if guided1 else g_a1) * m1
        maps.append(conv_adjoint(g_z1, W1, tuple(sample.shape[1:])))
    return torch.stack(maps)


class TwoConv(nn.Module):
    """conv -> act1 -> conv -> act2 -> sum over space; the activations are pluggable."""

    def __init__(self, act1: Callable[[Tensor], Tensor], act2: Callable[[Tensor], Tensor]) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(1, 2, K, bias=False).double()
        self.conv2 = nn.Conv2d(2, 3, K, bias=False).double()
        with torch.no_grad():
            self.conv1.weight.copy_(W1)
            self.conv2.weight.copy_(W2)
        self.act1 = act1
        self.act2 = act2

    def forward(self, x: Tensor) -> Tensor:
        return self.act2(self.conv2(self.act1(self.conv1(x)))).sum(dim=(2, 3))


ACTIVATIONS: dict[str, Callable[[], Callable[[Tensor], Tensor]]] = {
    "nn.ReLU": nn.ReLU,
    "nn.ReLU(inplace=True)": lambda: nn.ReLU(inplace=True),
    "F.relu": lambda: F.relu,
    "F.relu(inplace=True)": lambda: lambda t: F.relu(t, inplace=True),
    "torch.relu": lambda: torch.relu,
    "torch.relu_": lambda: torch.relu_,
    "Tensor.relu_": lambda: Tensor.relu_,
    "F.threshold(0, 0)": lambda: lambda t: F.threshold(t, 0.0, 0.0),
    "nn.ReLU6 (below 6)": nn.ReLU6,
    "F.leaky_relu(slope 0)": lambda: lambda t: F.leaky_relu(t, 0.0),
    "clamp(min=0)": lambda: lambda t: t.clamp(min=0),
    "torch.clamp(t, 0)": lambda: lambda t: torch.clamp(t, 0),
    "clamp_(min=0)": lambda: lambda t: t.clamp_(min=0),
    "clamp_min(0)": lambda: lambda t: torch.clamp_min(t, 0),
    "clip(min=0)": lambda: lambda t: t.clip(min=0),
    "relu_ on a view": lambda: lambda t: _on_view(t, Tensor.relu_),
    "clamp_ on a view": lambda: lambda t: _on_view(t, lambda v: v.clamp_(min=0)),
}


def _on_view(t: Tensor, op: Callable[[Tensor], object]) -> Tensor:
    out = t * 1  # not a leaf, so that its view can be written in place
    op(out.view(-1))
    return out


def test_reference_is_not_trivial() -> None:
    """The weights make guided and plain differ, so the tests below can tell them apart."""
    x = inputs()
    guided = expected_map(x, [0, 1, 2], guided=True)
    plain = expected_map(x, [0, 1, 2], guided=False)
    assert (guided - plain).abs().max() > 0.5
    assert guided.abs().max() > 0.5
    z1 = torch.stack([conv(sample, W1) for sample in x])
    z2 = torch.stack([conv(z.clamp(min=0), W2) for z in z1])
    for z in (z1, z2):
        assert z.max() < 6  # so that ReLU6 behaves as a ReLU on these inputs
        assert (z > 0).any() and (z < 0).any()


@pytest.mark.parametrize("name", list(ACTIVATIONS))
def test_guided_backprop_equals_the_masked_gradient_by_hand(name: str) -> None:
    make = ACTIVATIONS[name]
    model = TwoConv(make(), make())
    x = inputs()
    result = guided_backprop(model, x, target=[0, 1, 2])
    assert result.method == "guided_backprop"
    assert result.findings == ()
    torch.testing.assert_close(result.map, expected_map(x, [0, 1, 2], guided=True))


@pytest.mark.parametrize("name", ["nn.ReLU(inplace=True)", "F.relu", "clamp_(min=0)"])
def test_plain_gradient_equals_the_gradient_by_hand(name: str) -> None:
    model = TwoConv(ACTIVATIONS[name](), ACTIVATIONS[name]())
    x = inputs()
    result = gradient(model, x, target=[2, 0, 1])
    torch.testing.assert_close(result.map, expected_map(x, [2, 0, 1], guided=False))


def test_mixed_relu_styles_in_one_model() -> None:
    model = TwoConv(nn.ReLU(inplace=True), lambda t: t.clamp(min=0))
    x = inputs()
    torch.testing.assert_close(
        guided_backprop(model, x, target=1).map, expected_map(x, [1, 1, 1], guided=True)
    )


def test_relu_like_ops_that_are_not_relus_keep_their_gradient() -> None:
    """clamp with a max, LeakyReLU with a slope and hardtanh(-1, 1) are not ReLUs."""
    for act in (
        lambda t: t.clamp(min=0, max=1.5),
        lambda t: F.leaky_relu(t, 0.1),
        lambda t: F.hardtanh(t, -1.0, 1.0),
        lambda t: t.clamp(min=0.5),
    ):
        model = TwoConv(act, act)
        x = inputs()
        torch.testing.assert_close(
            guided_backprop(model, x, target=0).map, gradient(model, x, target=0).map
        )


# -- targets and batches ------------------------------------------------------------------


def _linear_model() -> nn.Linear:
    layer = nn.Linear(3, 4).double()
    with torch.no_grad():
        layer.weight.copy_(torch.arange(12, dtype=torch.float64).reshape(4, 3) - 5)
        layer.bias.copy_(torch.tensor([0.0, 10.0, -3.0, 1.0], dtype=torch.float64))
    return layer


@pytest.mark.parametrize(
    ("target", "classes"),
    [
        (2, [2, 2]),
        ([3, 0], [3, 0]),
        ((1, 2), [1, 2]),
        (torch.tensor([0, 3]), [0, 3]),
        (torch.tensor(1), [1, 1]),
        (torch.tensor([2, 1], dtype=torch.int32), [2, 1]),
    ],
)
def test_target_forms_pick_one_class_per_sample(target: object, classes: list[int]) -> None:
    layer = _linear_model()
    x = torch.tensor([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]], dtype=torch.float64)
    result = gradient(layer, x, target=target)  # type: ignore[arg-type]
    assert result.target is not None and result.target.tolist() == classes
    torch.testing.assert_close(result.map, layer.weight.detach()[classes])


def test_target_none_explains_each_samples_top_class() -> None:
    layer = _linear_model()
    x = torch.tensor([[1.0, 2.0, 3.0], [-5.0, 0.0, 0.0]], dtype=torch.float64)
    top = (x @ layer.weight.detach().T + layer.bias.detach()).argmax(1).tolist()
    assert top == [3, 0]  # different classes, so a shared class would be caught
    result = gradient(layer, x)
    assert result.target is not None and result.target.tolist() == top
    torch.testing.assert_close(result.map, layer.weight.detach()[top])


def test_target_callable_on_the_output() -> None:
    layer = _linear_model()
    x = torch.ones(2, 3, dtype=torch.float64)
    result = gradient(layer, x, target=lambda out: out[:, 1] - out[:, 2])
    assert result.target is None
    row = (layer.weight[1] - layer.weight[2]).detach()
    torch.testing.assert_close(result.map, row.expand(2, 3))
    per_sample = gradient(layer, x, target=lambda out: out[:, 0] * torch.tensor([1.0, 2.0]))
    torch.testing.assert_close(
        per_sample.map, torch.stack([layer.weight[0], 2 * layer.weight[0]]).detach()
    )


def test_dict_output_with_a_callable_target() -> None:
    layer = _linear_model()
    model = lambda t: {"logits": layer(t)}
    result = guided_backprop(
        model, torch.ones(1, 3, dtype=torch.float64), lambda o: o["logits"][:, 3]
    )
    torch.testing.assert_close(result.map, layer.weight.detach()[3:4])


def test_dense_output_sums_the_class_channel_over_positions() -> None:
    """Segmentation-like output (B, classes, H, W): the score is the class map's sum."""
    conv1x1 = nn.Conv2d(2, 3, 1, bias=False).double()
    with torch.no_grad():
        conv1x1.weight.copy_(
            torch.tensor([[1.0, 2.0], [3.0, -1.0], [0.5, 0.5]]).reshape(3, 2, 1, 1)
        )
    x = torch.randn(2, 2, 3, 3, dtype=torch.float64)
    result = gradient(conv1x1, x, target=[1, 2])
    expected = (
        torch.stack([torch.tensor([3.0, -1.0]), torch.tensor([0.5, 0.5])])
        .double()[:, :, None, None]
        .expand(2, 2, 3, 3)
    )
    torch.testing.assert_close(result.map, expected)


def test_samples_are_independent_in_a_batch() -> None:
    model = TwoConv(nn.ReLU(inplace=True), F.relu)
    x = inputs(3)
    batched = guided_backprop(model, x, target=[2, 1, 0]).map
    for i, c in enumerate([2, 1, 0]):
        single = guided_backprop(model, x[i : i + 1], target=c).map
        torch.testing.assert_close(batched[i : i + 1], single)


def test_float32_and_other_shapes() -> None:
    model = nn.Sequential(nn.Linear(4, 5), nn.ReLU(inplace=True), nn.Linear(5, 2))
    x = torch.randn(6, 4)
    result = guided_backprop(model, x, target=1)
    assert result.map.dtype == torch.float32 and result.map.shape == (6, 4)
    assert not result.map.requires_grad


# -- Grad-CAM --------------------------------------------------------------------------------


class CamNet(nn.Module):
    """conv (the Grad-CAM layer) -> ReLU(inplace=True) -> mean over space -> linear."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(1, 2, 1, bias=False).double()
        self.relu = nn.ReLU(inplace=True)
        self.head = nn.Linear(2, 3, bias=False).double()
        with torch.no_grad():
            self.conv.weight.copy_(torch.tensor([2.0, -1.0]).reshape(2, 1, 1, 1))
            self.head.weight.copy_(torch.tensor([[1.0, 3.0], [-2.0, 1.0], [0.5, 0.5]]))

    def forward(self, x: Tensor) -> Tensor:
        return self.head(self.relu(self.conv(x)).mean(dim=(2, 3)))


def test_grad_cam_equals_the_formula_on_a_known_activation() -> None:
    x = torch.tensor([[[[1.0, -2.0], [0.5, 3.0]]]], dtype=torch.float64)
    # The layer's output, by hand: channel 0 is 2x, channel 1 is -x.
    a = torch.stack([2 * x[0, 0], -x[0, 0]])
    on = (a > 0).double()
    v = torch.tensor([[1.0, 3.0], [-2.0, 1.0], [0.5, 0.5]], dtype=torch.float64)
    for c in range(3):
        # score = sum_k v[c, k] * mean(relu(a_k)): d score / d a_k = v[c, k] * on_k / 4
        g = v[c][:, None, None] * on / 4
        weights = g.mean(dim=(1, 2))
        expected = (weights[:, None, None] * a).sum(0).clamp(min=0)
        result = grad_cam(CamNet(), x, target=c, layer="conv")
        assert result.layer == "conv"
        torch.testing.assert_close(result.weights, weights[None])
        torch.testing.assert_close(result.activation_map, expected[None])
        torch.testing.assert_close(result.map, expected[None])  # same size as the input
        no_relu = grad_cam(CamNet(), x, target=c, layer="conv", relu=False)
        torch.testing.assert_close(
            no_relu.activation_map, (weights[:, None, None] * a).sum(0)[None]
        )


def test_grad_cam_upsamples_to_the_input_size() -> None:
    model = nn.Sequential(
        nn.Conv2d(1, 3, 3, stride=2), nn.ReLU(inplace=True), nn.Flatten(), nn.Linear(3 * 4 * 4, 2)
    )
    x = torch.randn(2, 1, 9, 9)
    result = grad_cam(model, x, target=[0, 1])
    assert result.layer == "0"  # the last convolution, by default
    assert result.activation_map is not None and result.activation_map.shape == (2, 4, 4)
    expected = F.interpolate(
        result.activation_map[:, None], size=(9, 9), mode="bilinear", align_corners=False
    )[:, 0]
    torch.testing.assert_close(result.map, expected)


def test_grad_cam_layer_given_as_a_module_and_the_weights_by_autograd() -> None:
    model = nn.Sequential(
        nn.Conv2d(1, 2, 3), nn.ReLU(inplace=True), nn.Conv2d(2, 2, 3), nn.Flatten()
    )
    model.append(nn.Linear(2 * 3 * 3, 3))
    x = torch.randn(2, 1, 7, 7)
    result = grad_cam(model, x, target=torch.tensor([2, 0]), layer=model[0])
    # Independent check with autograd on an explicitly split model.
    a = model[0](x).detach().requires_grad_()
    out = model[4](model[3](model[2](model[1](a.clone()))))
    (g,) = torch.autograd.grad(out[0, 2] + out[1, 0], a)
    weights = g.mean(dim=(2, 3))
    torch.testing.assert_close(result.weights, weights)
    torch.testing.assert_close(
        result.activation_map, F.relu((weights[:, :, None, None] * a.detach()).sum(1))
    )


def test_grad_cam_with_frozen_parameters_and_an_input_that_needs_no_grad() -> None:
    model = CamNet().requires_grad_(False)
    x = torch.tensor([[[[1.0, -2.0], [0.5, 3.0]]]], dtype=torch.float64)
    result = grad_cam(model, x, target=0, layer=model.conv)
    assert result.activation_map is not None and result.activation_map.shape == (1, 2, 2)
    assert all(not p.requires_grad for p in model.parameters())


# -- the model is left as it was -----------------------------------------------------------------


def _hook_counts(model: nn.Module) -> list[tuple[int, int, int, int]]:
    return [
        (
            len(m._forward_hooks),
            len(m._forward_pre_hooks),
            len(m._backward_hooks),
            len(m._backward_pre_hooks),
        )
        for m in model.modules()
    ]


def _no_modes_active() -> bool:
    return torch._C._len_torch_function_stack() == 0 and torch._C._len_torch_dispatch_stack() == 0


@pytest.mark.parametrize("method", ["gradient", "guided_backprop", "grad_cam"])
def test_modules_hooks_flags_and_grads_are_untouched(method: str) -> None:
    relu = nn.ReLU(inplace=True)
    model = nn.Sequential(nn.Conv2d(1, 2, 3), relu, nn.Conv2d(2, 2, 3), nn.Flatten())
    model.append(nn.Linear(2 * 3 * 3, 3))
    model[2].weight.requires_grad_(False)
    model[0].bias.grad = torch.full_like(model[0].bias, 7.0)
    sentinel = model[0].bias.grad
    fired: list[str] = []
    relu.register_forward_hook(lambda *_: fired.append("relu forward"))
    model.register_full_backward_hook(lambda *_: fired.append("model backward"))
    model.eval()
    model[1].train()  # a mixed state must survive too
    before_modules = list(model.modules())
    before_hooks = _hook_counts(model)
    before_flags = [(p.requires_grad, p.grad) for p in model.parameters()]
    before_training = [m.training for m in model.modules()]
    x = torch.randn(2, 1, 7, 7)

    if method == "grad_cam":
        grad_cam(model, x, target=1, layer=model[0])
    else:
        {"gradient": gradient, "guided_backprop": guided_backprop}[method](model, x, target=1)

    assert list(model.modules()) == before_modules
    assert all(a is b for a, b in zip(model.modules(), before_modules, strict=True))
    assert model[1] is relu and relu.inplace is True
    assert _hook_counts(model) == before_hooks
    assert [(p.requires_grad, p.grad) for p in model.parameters()] == before_flags
    assert model[0].bias.grad is sentinel and torch.equal(sentinel, torch.full((2,), 7.0))
    assert [m.training for m in model.modules()] == before_training
    # The user's hooks still run; Grad-CAM's backward stops at the layer, before the
    # model's input, so the model's full backward hook has nothing to report there.
    backward = [] if method == "grad_cam" else ["model backward"]
    assert fired == ["relu forward", *backward]
    assert not x.requires_grad and x.grad is None
    assert _no_modes_active()
    assert torch._C._is_multithreading_enabled()


def test_input_written_in_place_by_the_model_is_not_the_users() -> None:
    model = nn.Sequential(nn.ReLU(inplace=True), nn.Linear(3, 2))
    x = torch.tensor([[-1.0, 2.0, -3.0]])
    original = x.clone()
    result = guided_backprop(model, x, target=0)
    assert torch.equal(x, original)
    w = model[1].weight.detach()
    torch.testing.assert_close(result.map, (w[0].clamp(min=0) * (x[0] > 0))[None])


def test_batchnorm_statistics_and_random_state_are_restored() -> None:
    model = nn.Sequential(
        nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Dropout(0.5), nn.ReLU(), nn.Linear(4, 2)
    )
    model.train()
    x = torch.randn(8, 3)
    buffers = {name: b.clone() for name, b in model.named_buffers()}
    state = torch.get_rng_state()
    guided_backprop(model, x, target=0)
    grad_cam_free = gradient(model, x, target=1)
    assert grad_cam_free.map.shape == (8, 3)
    for name, b in model.named_buffers():
        assert torch.equal(b, buffers[name]), name
    assert torch.equal(torch.get_rng_state(), state)
    assert model.training


def test_users_numbers_are_bit_identical_after_a_saliency_call() -> None:
    def step(model: nn.Module, x: Tensor) -> list[Tensor]:
        model.zero_grad(set_to_none=True)
        model(x).logsumexp(1).sum().backward()
        return [p.grad.clone() for p in model.parameters() if p.grad is not None]

    torch.manual_seed(3)
    model = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(inplace=True), nn.Flatten(), nn.Linear(18, 3))
    x = torch.randn(2, 1, 5, 5)
    reference = step(model, x)
    guided_backprop(model, x, target=1)
    grad_cam(model, x, target=2)
    again = step(model, x)
    assert all(torch.equal(a, b) for a, b in zip(reference, again, strict=True))


def test_everything_is_removed_when_the_model_raises() -> None:
    class Boom(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv = nn.Conv2d(1, 1, 1)

        def forward(self, x: Tensor) -> Tensor:
            self.conv(x).clamp(min=0)
            raise KeyError("boom")

    model = Boom()
    x = torch.randn(1, 1, 2, 2)
    for call in (
        lambda: guided_backprop(model, x),
        lambda: gradient(model, x),
        lambda: grad_cam(model, x, layer="conv"),
        lambda: activations(model, x, "conv"),
    ):
        with pytest.raises(KeyError, match="boom"):
            call()
        assert _no_modes_active()
        assert _hook_counts(model) == [(0, 0, 0, 0), (0, 0, 0, 0)]
        assert torch._C._is_multithreading_enabled()


def test_no_host_sync_with_an_int_target() -> None:
    """Nothing reads a tensor value on the host (``.item()``, ``bool()``), in the hooks or out."""

    class SyncCounter(TorchDispatchMode):
        syncs = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            if func is torch.ops.aten._local_scalar_dense.default:
                SyncCounter.syncs += 1
            return func(*args, **(kwargs or {}))

    model = TwoConv(nn.ReLU(inplace=True), lambda t: t.clamp(min=0))
    x = inputs(2)
    with SyncCounter():
        result = guided_backprop(model, x, target=1)
        torch.ones(1).item()  # the counter works
    assert SyncCounter.syncs == 1
    torch.testing.assert_close(result.map, expected_map(x, [1, 1], guided=True))


def test_an_outer_function_mode_still_sees_the_users_calls() -> None:
    class Seen(TorchFunctionMode):
        names: ClassVar[list[str]] = []

        def __torch_function__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            Seen.names.append(getattr(func, "__name__", "?"))
            return func(*args, **(kwargs or {}))

    model = TwoConv(F.relu, lambda t: t.clamp(min=0))
    with Seen():
        result = guided_backprop(model, inputs(1), target=0)
    assert "relu" in Seen.names and "clamp" in Seen.names
    torch.testing.assert_close(result.map, expected_map(inputs(1), [0], guided=True))


# -- what the guided rule cannot reach: GP401 ------------------------------------------------------


class OwnRelu(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a: Tensor) -> Tensor:  # type: ignore[override]
        ctx.save_for_backward(a)
        return a.clamp(min=0)

    @staticmethod
    def backward(ctx, g: Tensor) -> Tensor:  # type: ignore[override]
        (a,) = ctx.saved_tensors
        return g * (a > 0)


def test_custom_function_is_reported_and_warned_about() -> None:
    model = TwoConv(OwnRelu.apply, nn.ReLU())
    x = inputs(1)
    with pytest.warns(GradprobeWarning, match="GP401"):
        result = guided_backprop(model, x, target=0)
    (finding,) = result.findings
    assert finding.code == "GP401"
    assert finding.details["reason"] == "custom"
    assert finding.node is not None and finding.node.endswith("OwnRelu")
    # The map is the mix the finding describes: guided at act2, plain inside the Function.
    torch.testing.assert_close(result.map, expected_map(x, [0], guided=(False, True)))
    assert not torch.allclose(result.map, expected_map(x, [0], guided=True))


def test_blind_spot_policy_raise_and_ignore() -> None:
    model = TwoConv(OwnRelu.apply, nn.ReLU())
    with pytest.raises(SaliencyBlindSpotError) as info:
        guided_backprop(model, inputs(1), target=0, on_blind_spot="raise")
    assert isinstance(info.value, GradprobeError) and isinstance(info.value, RuntimeError)
    assert [f.code for f in info.value.findings] == ["GP401"]
    assert _no_modes_active()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        quiet = guided_backprop(model, inputs(1), target=0, on_blind_spot="ignore")
    assert [f.code for f in quiet.findings] == ["GP401"]


def test_full_backward_hooks_of_the_user_are_not_blind_spots() -> None:
    model = TwoConv(nn.ReLU(), nn.ReLU())
    model.register_full_backward_hook(lambda *_: None)
    x = inputs(1)
    result = guided_backprop(model, x, target=2)
    assert result.findings == ()
    torch.testing.assert_close(result.map, expected_map(x, [2], guided=True))


@pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")
def test_torchscript_graph_is_reported() -> None:
    scripted = torch.jit.script(nn.Sequential(nn.Linear(3, 3), nn.ReLU(), nn.Linear(3, 2)))
    x = torch.randn(2, 3)
    findings = [
        guided_backprop(scripted, x, target=0, on_blind_spot="ignore").findings for _ in range(3)
    ]
    # The profiling executor runs the ops eagerly first (handled), then its own backward.
    assert findings[0] == ()
    assert [f.details["reason"] for f in findings[2]] == ["script"]
    assert findings[2][0].node == "DifferentiableGraphBackward"


def test_compiled_region_is_reported() -> None:
    compiled = torch.compile(
        nn.Sequential(nn.Linear(3, 3), nn.ReLU(), nn.Linear(3, 2)), backend="aot_eager"
    )
    result = guided_backprop(compiled, torch.randn(2, 3), target=0, on_blind_spot="ignore")
    (finding,) = result.findings
    assert finding.details["reason"] == "compiled"
    assert finding.node == "CompiledFunctionBackward"
    assert finding.module == "<model>"


def test_non_reentrant_checkpoint_is_handled_and_reentrant_is_refused() -> None:
    from torch.utils.checkpoint import checkpoint

    inner = TwoConv(nn.ReLU(inplace=True), lambda t: t.clamp(min=0))
    x = inputs(2)
    model = lambda t: checkpoint(inner, t, use_reentrant=False)
    result = guided_backprop(model, x, target=[0, 2])
    torch.testing.assert_close(result.map, expected_map(x, [0, 2], guided=True))
    reentrant = lambda t: checkpoint(inner, t, use_reentrant=True)
    with pytest.raises(GradprobeValueError, match="use_reentrant=False"):
        guided_backprop(reentrant, x, target=0)
    assert _no_modes_active()


# -- activations ---------------------------------------------------------------------------------


def test_activations_are_the_layer_output_before_an_inplace_relu() -> None:
    model = nn.Sequential(nn.Conv2d(1, 3, 2), nn.ReLU(inplace=True))
    x = torch.randn(2, 1, 4, 4)
    out = activations(model, x, "0")
    with torch.no_grad():
        expected = F.conv2d(x, model[0].weight, model[0].bias)
    torch.testing.assert_close(out, expected)
    assert (out < 0).any() and not out.requires_grad
    assert _hook_counts(model) == [(0, 0, 0, 0)] * 3
    assert torch.equal(activations(model, x, model[1]), expected.clamp(min=0))


# -- errors ---------------------------------------------------------------------------------------


def test_bad_model_and_input() -> None:
    model = nn.Linear(3, 2)
    with pytest.raises(GradprobeTypeError, match=r"torch.nn.Module or a callable"):
        gradient(42, torch.ones(1, 3))  # type: ignore[arg-type]
    with pytest.raises(GradprobeTypeError, match=r"grad_cam.*torch.nn.Module"):
        grad_cam(lambda t: t, torch.ones(1, 3))  # type: ignore[arg-type]
    with pytest.raises(GradprobeTypeError, match=r"torch.Tensor batch, got \[1.0, 2.0, 3.0\]"):
        gradient(model, [1.0, 2.0, 3.0])  # type: ignore[arg-type]
    with pytest.raises(GradprobeTypeError, match=r"floating-point input.*torch.int64"):
        guided_backprop(model, torch.ones(1, 3, dtype=torch.long))
    with pytest.raises(GradprobeValueError, match="B >= 1"):
        gradient(model, torch.ones(0, 3))
    with pytest.raises(GradprobeTypeError, match="on_blind_spot"):
        guided_backprop(model, torch.ones(1, 3), on_blind_spot="loud")  # type: ignore[arg-type]


def _cnn() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Conv2d(3, 4, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 2)
    )


@pytest.mark.parametrize("explain", [guided_backprop, gradient, grad_cam])
def test_meta_and_sparse_inputs_are_refused_by_name(explain: Callable[..., object]) -> None:
    model, x = _cnn(), torch.randn(1, 3, 8, 8)
    name = explain.__name__
    with pytest.raises(
        GradprobeValueError,
        match=rf"^{name}\(\) needs an input with values, got a "
        r"tensor on the meta device \(shape \(1, 3, 8, 8\)\)",
    ):
        explain(model, x.to("meta"))
    with pytest.raises(
        GradprobeTypeError,
        match=rf"^{name}\(\) needs a dense input, got a "
        r"torch.sparse_coo tensor .*Pass x.to_dense\(\)",
    ):
        explain(model, x.to_sparse())
    with (
        torch.inference_mode(),
        pytest.raises(
            GradprobeValueError, match=rf"^{name}\(\) was called inside torch.inference_mode\(\)"
        ),
    ):
        explain(model, x)


@pytest.mark.parametrize("explain", [guided_backprop, gradient, grad_cam])
def test_an_input_made_under_inference_mode_is_explained_like_any_other(
    explain: Callable[..., SaliencyMap],
) -> None:
    model, x = _cnn(), torch.randn(1, 3, 8, 8)
    with torch.inference_mode():
        frozen = x.clone()
    assert frozen.is_inference()
    assert torch.equal(explain(model, frozen).map, explain(model, x).map)
    assert frozen.is_inference() and torch.equal(frozen, x)  # the user's tensor untouched
    assert tuple(activations(model, frozen, "1").shape) == (1, 4, 6, 6)


@pytest.mark.parametrize(
    ("target", "error", "match"),
    [
        (5, GradprobeValueError, r"target=5\) is out of range: the output has 2 classes"),
        (-1, GradprobeValueError, "out of range"),
        (True, GradprobeTypeError, "class index"),
        ("cat", GradprobeTypeError, "int class indices"),
        (1.5, GradprobeTypeError, "got 1.5"),
        ([0, 1, 1], GradprobeValueError, r"shape \(3,\); give one class per sample, shape \(2,\)"),
        (torch.tensor([0, 2]), GradprobeValueError, r"outside 0..1 \(\[0, 2\]\)"),
        (torch.tensor([0.0, 1.0]), GradprobeTypeError, "integer class indices.*labels.long"),
        (lambda out: 3.0, GradprobeTypeError, "must return a floating-point tensor"),
        (lambda out: out, GradprobeValueError, r"returned shape \(2, 2\)"),
        (lambda out: torch.ones(()), GradprobeValueError, "does not depend on the model's output"),
    ],
)
def test_bad_targets(target: object, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        gradient(nn.Linear(3, 2), torch.ones(2, 3), target=target)  # type: ignore[arg-type]
    assert _no_modes_active()


def test_outputs_a_class_cannot_be_picked_from() -> None:
    with pytest.raises(GradprobeValueError, match=r"returned a tuple.*target=fn"):
        gradient(lambda t: (t, t), torch.ones(2, 3), target=0)
    with pytest.raises(GradprobeValueError, match=r"target=None\) takes each sample's top class"):
        gradient(nn.Conv2d(1, 2, 1), torch.ones(1, 1, 2, 2))
    with pytest.raises(GradprobeValueError, match="does not depend on the input"):
        gradient(lambda t: torch.ones(2, 2), torch.ones(2, 3), target=0)


class Unused(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.head = nn.Linear(4, 2)
        self.spare = nn.Conv2d(1, 1, 1)

    def forward(self, x: Tensor) -> Tensor:
        return self.head(x.flatten(1))


def test_bad_grad_cam_layers() -> None:
    model = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.Flatten(), nn.Linear(8, 2))
    shared = nn.Conv2d(1, 1, 1)
    twice = nn.Sequential(shared, shared, nn.Flatten(), nn.Linear(4, 2))
    unused = Unused()
    x = torch.randn(1, 1, 4, 4)
    x2 = torch.randn(1, 1, 2, 2)
    cases = [
        (lambda: grad_cam(model, x, layer="nope"), GradprobeValueError, "no submodule.*'0'"),
        (
            lambda: grad_cam(model, x, layer=nn.Conv2d(1, 2, 3)),
            GradprobeValueError,
            "not a submodule",
        ),
        (
            lambda: grad_cam(model, x, layer=3),
            GradprobeTypeError,
            "nn.Module of the model or its name",
        ),
        (lambda: grad_cam(model, x, layer="3"), GradprobeValueError, r"shape \(1, 2\).*spatial"),
        (lambda: grad_cam(twice, x2, layer=shared), GradprobeValueError, "called 2 times"),
        (lambda: grad_cam(unused, x2, layer="spare"), GradprobeValueError, "was not called"),
        (lambda: grad_cam(nn.Sequential(nn.Flatten()), x2), GradprobeValueError, "no convolution"),
        (lambda: activations(unused, x2, "spare"), GradprobeValueError, "was not called"),
    ]
    for call, error, match in cases:
        with pytest.raises(error, match=match):
            call()
        assert _hook_counts(model) == [(0, 0, 0, 0)] * 5


def test_grad_cam_layer_that_does_not_influence_the_target() -> None:
    class TwoHeads(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.a = nn.Conv2d(1, 1, 1)
            self.b = nn.Conv2d(1, 1, 1)

        def forward(self, x: Tensor) -> Tensor:
            self.b(x)
            return self.a(x).flatten(1)

    with pytest.raises(GradprobeValueError, match="does not depend on the output of layer 'b'"):
        grad_cam(TwoHeads(), torch.randn(1, 1, 2, 2), target=0, layer="b")


def test_saliency_map_repr() -> None:
    result = grad_cam(CamNet(), torch.ones(2, 1, 2, 2, dtype=torch.float64), target=[1, 2])
    assert repr(result) == "<SaliencyMap grad_cam (2, 2, 2) target=[1, 2] layer='conv', 0 findings>"
    callable_target = gradient(nn.Linear(2, 2), torch.ones(1, 2), target=lambda o: o[:, 0])
    assert repr(callable_target) == "<SaliencyMap gradient (1, 2) target=callable, 0 findings>"
    assert isinstance(result, SaliencyMap)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_matches_cpu() -> None:  # pragma: no cover - no GPU in CI
    model = TwoConv(nn.ReLU(inplace=True), lambda t: t.clamp(min=0))
    x = inputs(2)
    expected = expected_map(x, [1, 2], guided=True)
    result = guided_backprop(model.cuda(), x.cuda(), target=torch.tensor([1, 2], device="cuda"))
    torch.testing.assert_close(result.map.cpu(), expected)


def test_nothing_of_the_call_is_kept_alive() -> None:
    """The forward graph and its activations are freed when the call returns."""
    kept: list[weakref.ref[Tensor]] = []

    class Spy(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv = nn.Conv2d(1, 2, 3)

        def forward(self, x: Tensor) -> Tensor:
            h = self.conv(x).clamp(min=0)
            kept.append(weakref.ref(h))
            return h.sum(dim=(2, 3))

    model = Spy()
    x = torch.randn(1, 1, 5, 5)
    results = [guided_backprop(model, x, target=0), gradient(model, x, target=1)]
    results.append(grad_cam(model, x, target=1))
    assert len(kept) == 3 and all(ref() is None for ref in kept)
    assert all(not r.map.requires_grad and r.map.grad_fn is None for r in results)
