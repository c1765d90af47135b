"""The hook inspector on real nets: a ResNet-shaped CNN with in-place ReLUs, a Transformer."""

from __future__ import annotations

import runpy
import textwrap
import warnings
from pathlib import Path
from typing import Any

import torch
from benchmarks.models import example_input, resnet18_like, transformer_encoder
from torch import nn

from gradprobe.hooks import HookProbe, explain, inventory, timeline


def _grads(model: nn.Module, x: torch.Tensor) -> list[torch.Tensor]:
    model.zero_grad(set_to_none=True)
    model(x).float().pow(2).mean().backward()
    return [p.grad.clone() for p in model.parameters() if p.grad is not None]


def test_resnet_timeline_with_inplace_relus_changes_nothing() -> None:
    model = resnet18_like(num_classes=10)
    x = example_input("resnet18_like", batch=2, size=32)
    reference = _grads(model, x)
    block = model.layer1[0]
    calls: list[str] = []
    block.conv1.register_full_backward_hook(lambda m, gi, go: calls.append("conv1"))
    block.register_forward_hook(lambda m, a, o: calls.append("block"))
    model.fc.weight.register_hook(lambda g: None)
    before = {name: dict(m._backward_hooks) for name, m in model.named_modules()}
    found = timeline(lambda: _grads(model, x), model=model)
    assert [(e.kind, e.target) for e in found] == [
        ("forward", "layer1.0 (BasicBlock)"),
        ("tensor", "fc.weight"),
        ("backward", "layer1.0.conv1 (Conv2d)"),
    ]
    assert {name: dict(m._backward_hooks) for name, m in model.named_modules()} == before
    again = _grads(model, x)
    assert all(torch.equal(a, b) for a, b in zip(reference, again, strict=True))
    rows = [(e.owner, e.kind) for e in inventory(model, include_globals=False)]
    assert rows == [
        ("layer1.0 (BasicBlock)", "forward"),
        ("layer1.0.conv1 (Conv2d)", "backward"),
        ("fc.weight", "tensor"),
    ]


def test_probe_names_the_bn_whose_output_the_inplace_relu_modifies(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text(
        textwrap.dedent(
            """
            from benchmarks.models import example_input, resnet18_like
            model = resnet18_like(num_classes=10)
            model.layer2[0].bn1.register_full_backward_hook(lambda m, gi, go: None)
            model(example_input("resnet18_like", batch=1, size=32))
            """
        ).lstrip()
    )
    probe = HookProbe()
    probe.start()
    error: BaseException | None = None
    try:
        runpy.run_path(str(script), run_name="__main__")
    except RuntimeError as caught:
        error = caught
    finally:
        probe.stop()
    assert error is not None
    (finding,) = probe.findings(error)
    assert (finding.code, finding.module) == ("GP305", "model.layer2.0.bn1 (BatchNorm2d)")
    assert "model.layer2.0.relu (ReLU) then modified one in place" in finding.message
    cause, created, failed = finding.locations
    assert (cause.role, cause.line, Path(cause.file).name) == ("cause", 3, "train.py")
    assert created.role == "created" and created.text == "self.relu = nn.ReLU(inplace=True)"
    # the innermost frame outside torch: the model's own forward, where the ReLU runs
    assert (failed.role, failed.text) == ("error", "out = self.relu(self.bn1(self.conv1(x)))")


def test_transformer_encoder_explain_timeline_and_probe() -> None:
    encoder = transformer_encoder(layers=2, d_model=32, nhead=4)
    x = example_input("transformer_encoder", batch=2, size=5, d_model=32).requires_grad_()
    layout = explain(encoder.layers[0], x)
    assert layout.node == "NativeLayerNormBackward0"
    assert not layout.legacy_complete
    assert [slot.label for slot in layout.full_grad_input] == ["grad of input 0"]

    events: list[Any] = []
    encoder.layers[1].linear1.register_full_backward_hook(lambda m, gi, go: events.append(1))
    encoder.layers[0].register_forward_hook(lambda m, a, o: None)
    probe = HookProbe()
    probe.start()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # the probe must not add warnings
            found = timeline(lambda: encoder(x).sum().backward(), model=encoder)
    finally:
        probe.stop()
    assert [(e.kind, e.target) for e in found] == [
        ("forward", "layers.0 (TransformerEncoderLayer)"),
        ("backward", "layers.1.linear1 (Linear)"),
    ]
    assert events == [1]
    assert probe.findings(None) == []
