"""watch on real networks: a ResNet-shaped CNN with in-place ReLUs, nn.TransformerEncoder,
and torch.compile (eager and aot_eager backends)."""

from __future__ import annotations

import copy
import subprocess
import sys
import textwrap

import pytest
import torch
from benchmarks.models import BasicBlock, ResNet, transformer_encoder
from torch import nn

from gradprobe._watch import watch
from gradprobe.errors import GradprobeWarning


def small_resnet() -> ResNet:
    torch.manual_seed(0)
    return ResNet(BasicBlock, [1, 1, 1, 1], num_classes=5, width=4).train()


def test_resnet_with_inplace_relus_is_fully_recorded() -> None:
    model = small_resnet()
    x = torch.randn(2, 3, 16, 16)
    with watch(model, sample_every=1) as session:
        model(x).sum().backward()
    record = session.history[0]
    labels = [a.label for a in record.activations]
    assert labels[:5] == ["(input)", "conv1", "bn1", "relu", "maxpool"]
    # BasicBlock calls its ReLU twice: both calls are recorded, in order.
    assert labels.index("layer1.0.relu") < labels.index("layer1.0.relu (call 2)")
    leaves = [n for n, m in model.named_modules() if next(m.children(), None) is None]
    assert {a.module for a in record.activations} == {*leaves, "(input)"}
    grads = {g.label for g in record.output_grads}
    assert "layer1.0.bn1" in grads and "layer1.0.relu (call 2)" in grads
    assert set(record.parameter_grads) == {n for n, _ in model.named_parameters()}
    # bn1 is recorded before the in-place ReLU overwrote it: it has negative values.
    assert {a.module: a.stats for a in record.activations}["bn1"].min < 0
    assert session.findings() == []


def test_resnet_nan_is_found_at_its_step_and_module() -> None:
    model = small_resnet()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    with watch(model, optimizer=opt, sample_every=3) as session:
        for step in range(5):
            if step == 4:
                with torch.no_grad():
                    model.layer2[0].bn1.weight[1] = float("nan")
            opt.zero_grad()
            model(torch.randn(2, 3, 16, 16)).pow(2).mean().backward()
            opt.step()
    nan = next(f for f in session.findings() if f.code == "GP201")
    assert (nan.module, nan.details["step"]) == ("layer2.0.bn1", 4)


def test_resnet_dead_channels_are_found() -> None:
    model = small_resnet()
    with torch.no_grad():
        model.bn1.bias[:2] = -100.0  # channels 0 and 1 of the stem's ReLU never fire
    with watch(model, dead_relu=0.5) as session:
        model(torch.randn(2, 3, 16, 16)).sum().backward()
    dead = [f for f in session.findings() if f.code == "GP205"]
    assert [f.module for f in dead] == ["relu"]
    # units are channels (dim 1 of NCHW); rows are batch x height x width
    assert dead[0].details == {"dead": 2, "units": 4, "rows": 2 * 8 * 8, "fraction": 0.5}


def test_transformer_encoder_is_recorded_and_nan_located() -> None:
    model = transformer_encoder(layers=2, d_model=16, nhead=2)
    with watch(model, sample_every=2) as session:
        for step in range(3):
            if step == 2:
                with torch.no_grad():
                    model.layers[1].linear1.bias[0] = float("inf")
            model(torch.randn(2, 5, 16)).sum().backward()
    first = session.history[0]
    labels = [a.label for a in first.activations]
    assert "layers.0.self_attn[0]" in labels  # MultiheadAttention returns (out, None)
    assert labels.index("layers.0.self_attn[0]") < labels.index("layers.0.linear1")
    grads = {g.label for g in first.output_grads}
    assert {"layers.0.self_attn[0]", "layers.1.norm2", "layers.0.linear1"} <= grads
    assert "layers.0.self_attn.in_proj_weight" in first.parameter_grads
    found = {f.code: f for f in session.findings()}
    assert (found["GP201"].module, found["GP201"].details["step"]) == ("layers.1.linear1", 2)
    assert "+Inf" in found["GP201"].message


def _mlp() -> nn.Sequential:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 4), nn.ReLU(inplace=True), nn.Linear(4, 2))


def _activation_values(session: object) -> list[list[tuple[str, float, float]]]:
    return [
        [(a.label, a.stats.min, a.stats.max) for a in record.activations]
        for record in session.history  # type: ignore[attr-defined]
    ]


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_watch_entered_before_compile_records_like_eager(backend: str) -> None:
    torch._dynamo.reset()
    model = _mlp()
    twin = copy.deepcopy(model)
    inputs = [torch.randn(5, 3) for _ in range(3)]
    with watch(twin) as eager:
        for x in inputs:
            twin(x).sum().backward()
    with watch(model) as session:
        compiled = torch.compile(model, backend=backend)
        for x in inputs:
            compiled(x).sum().backward()
    assert session.notes == ()
    assert _activation_values(session) == _activation_values(eager)
    assert [len(r.gradients) for r in session.history] == [len(r.gradients) for r in eager.history]
    for a, b in zip(model.parameters(), twin.parameters(), strict=True):
        assert torch.equal(a.grad, b.grad)


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_watch_after_the_first_compiled_call_records_gradients_and_says_why(
    backend: str,
) -> None:
    torch._dynamo.reset()
    model = _mlp()
    compiled = torch.compile(model, backend=backend)
    compiled(torch.randn(5, 3)).sum().backward()  # dynamo now ignores new module hooks
    grads: dict[str, torch.Tensor] = {}

    def train() -> None:
        for _ in range(3):
            model.zero_grad()
            compiled(torch.randn(5, 3)).sum().backward()
            grads.update({n: p.grad.clone() for n, p in model.named_parameters()})

    session = watch(model, sample_every=1)
    with pytest.warns(GradprobeWarning, match="no forward hook of a watched module ever fired"):
        train()
    session.close()
    assert session.steps == 3  # each backward pass counted as a step
    last = session.history[-1]
    assert last.activations == ()
    assert set(last.parameter_grads) == set(grads)
    for name, stats in last.parameter_grads.items():
        assert stats.max_abs == grads[name].abs().max().item()
    assert any("compiled" in note for note in session.notes)


def test_watching_the_compiled_wrapper_uses_the_original_names() -> None:
    torch._dynamo.reset()
    model = _mlp()
    compiled = torch.compile(model, backend="eager")
    with watch(compiled) as session:  # a GradprobeWarning would fail the test
        compiled(torch.randn(5, 3)).sum().backward()
    assert session.options()["modules"] == ["0", "1", "2"]
    assert [a.label for a in session.history[0].activations] == ["(input)", "0", "1", "2"]


@pytest.mark.slow
def test_compiling_after_watch_in_a_process_without_dynamo_still_records() -> None:
    # When dynamo is not imported yet at watch(), the hooks are plain functions; a later
    # torch.compile traces them and breaks the graph at output.grad_fn, then runs them.
    script = textwrap.dedent(
        """
        import copy, sys, torch
        from torch import nn
        assert "torch._dynamo" not in sys.modules
        from gradprobe._watch import watch
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(inplace=True), nn.Linear(4, 2))
        twin = copy.deepcopy(model)
        x = torch.randn(5, 3)
        with watch(twin) as eager:
            for _ in range(2):
                twin(x).sum().backward()
        with watch(model) as session:
            compiled = torch.compile(model, backend="aot_eager")
            for _ in range(2):
                compiled(x).sum().backward()
        def values(s):
            return [
                [(a.label, a.stats.min, a.stats.max) for a in r.activations]
                + [(g.label, g.stats.min, g.stats.max) for g in r.output_grads]
                for r in s.history
            ]
        assert values(session) == values(eager), (values(session), values(eager))
        assert session.notes == ()
        print("same records")
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=False
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "same records" in result.stdout
