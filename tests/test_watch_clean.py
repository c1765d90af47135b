"""watch leaves nothing behind: hooks, references, and the user's numbers."""

from __future__ import annotations

import copy
import gc
import subprocess
import sys
import textwrap
import weakref
from typing import Any

import pytest
import torch
from benchmarks.models import BasicBlock, ResNet, transformer_encoder
from torch import nn

from gradprobe._watch import watch

_MODULE_DICTS = (
    "_forward_hooks",
    "_forward_hooks_with_kwargs",
    "_forward_hooks_always_called",
    "_forward_pre_hooks",
    "_forward_pre_hooks_with_kwargs",
    "_backward_hooks",
    "_backward_pre_hooks",
)


def hook_state(model: nn.Module, optimizer: torch.optim.Optimizer | None = None) -> dict[Any, Any]:
    """Copies of every hook registry watch could touch."""
    state: dict[Any, Any] = {}
    for name, module in model.named_modules():
        for attr in _MODULE_DICTS:
            state[(name, attr)] = dict(getattr(module, attr))
    for name, param in model.named_parameters():
        hooks = param._backward_hooks
        state[("param", name)] = None if hooks is None else dict(hooks)
        state[("post-accumulate", name)] = param._post_accumulate_grad_hooks
    registry = torch.nn.modules.module
    for attr in dir(registry):
        if attr.startswith("_global_"):
            value = getattr(registry, attr)
            state[("global", attr)] = dict(value) if isinstance(value, dict) else value
    state["autograd"] = (torch.autograd.backward, torch.autograd.grad)  # wrapped while open
    if optimizer is not None:
        state["opt pre"] = dict(optimizer._optimizer_step_pre_hooks)
        state["opt post"] = dict(optimizer._optimizer_step_post_hooks)
    return state


def small_resnet() -> nn.Module:
    torch.manual_seed(0)
    return ResNet(BasicBlock, [1, 1, 1, 1], num_classes=5, width=4).train()


def small_transformer() -> nn.Module:
    return transformer_encoder(layers=2, d_model=16, nhead=2)


def small_lstm_net() -> nn.Module:
    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lstm = nn.LSTM(4, 6, batch_first=True)
            self.head = nn.Linear(6, 2)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            out, _ = self.lstm(x)
            result: torch.Tensor = self.head(out[:, -1])
            return result

    torch.manual_seed(0)
    return Net()


MODELS = {
    "resnet": (small_resnet, (2, 3, 16, 16)),
    "transformer": (small_transformer, (2, 5, 16)),
    "lstm": (small_lstm_net, (3, 7, 4)),
}


def _train(
    model: nn.Module, shape: tuple[int, ...], steps: int, watched: bool
) -> list[dict[str, torch.Tensor]]:
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    generator = torch.Generator().manual_seed(1)
    inputs = [torch.randn(shape, generator=generator) for _ in range(steps)]
    snapshots = []
    session = watch(model, optimizer=opt, sample_every=1) if watched else None
    try:
        for x in inputs:
            opt.zero_grad()
            model(x).pow(2).mean().backward()
            snapshots.append({n: p.grad.clone() for n, p in model.named_parameters()})
            opt.step()
            snapshots.append({n: p.detach().clone() for n, p in model.named_parameters()})
            snapshots.append({n: b.clone() for n, b in model.named_buffers()})
    finally:
        if session is not None:
            session.close()
            assert session.notes == ()
    return snapshots


@pytest.mark.parametrize("name", sorted(MODELS))
def test_gradients_and_updates_are_bit_identical_with_and_without_watch(name: str) -> None:
    build, shape = MODELS[name]
    model = build()
    twin = copy.deepcopy(model)
    plain = _train(model, shape, steps=3, watched=False)
    watched = _train(twin, shape, steps=3, watched=True)
    assert len(plain) == len(watched)
    for a, b in zip(plain, watched, strict=True):
        assert a.keys() == b.keys()
        for key in a:
            assert torch.equal(a[key], b[key]), key


@pytest.mark.parametrize("name", sorted(MODELS))
def test_every_hook_registry_is_as_before_after_a_normal_exit(name: str) -> None:
    build, shape = MODELS[name]
    model = build()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    before = hook_state(model, opt)
    with watch(model, optimizer=opt, sample_every=1) as session:
        assert hook_state(model, opt) != before  # something really was installed
        model(torch.randn(shape)).sum().backward()
        opt.step()
    assert hook_state(model, opt) == before
    assert session.history[0].activations


def test_every_hook_registry_is_as_before_when_the_body_raises() -> None:
    model = small_resnet()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    model.fc.weight.register_hook(lambda g: None)  # a user hook that must survive
    before = hook_state(model, opt)
    with pytest.raises(KeyError, match="boom"), watch(model, optimizer=opt) as session:
        model(torch.randn(2, 3, 16, 16)).sum().backward()
        raise KeyError("boom")
    assert hook_state(model, opt) == before
    assert not session.open
    assert session.history[0].gradients  # results survive the exception


def test_a_failing_forward_inside_watch_leaves_nothing_behind() -> None:
    model = nn.Sequential(nn.Linear(3, 4), nn.Linear(5, 1))  # shapes do not chain
    before = hook_state(model)
    with pytest.raises(RuntimeError, match="shapes cannot be multiplied"), watch(model):
        model(torch.randn(2, 3))
    assert hook_state(model) == before


def _reachable_tensors(root: object, limit: int = 20000) -> list[torch.Tensor]:
    found = []
    seen = {id(root)}
    todo = [root]
    while todo and len(seen) < limit:
        obj = todo.pop()
        for ref in gc.get_referents(obj):
            if isinstance(ref, (type, type(sys))) or id(ref) in seen:
                continue
            seen.add(id(ref))
            if isinstance(ref, torch.Tensor):
                found.append(ref)
            todo.append(ref)
    return found


def test_no_tensor_or_module_is_kept_alive_after_close() -> None:
    model = small_resnet()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(2, 3, 16, 16)
    with watch(model, optimizer=opt, sample_every=1) as session:
        for _ in range(2):
            opt.zero_grad()
            out = model(x)
            loss = out.sum()
            loss.backward()
            opt.step()
        kept = model(x)  # a graph that is never backpropagated
    refs = [weakref.ref(obj) for obj in (model, opt, x, out, loss, kept, model.fc.weight)]
    del model, opt, x, out, loss, kept
    gc.collect()
    assert [ref() for ref in refs] == [None] * len(refs)
    assert _reachable_tensors(session) == []
    assert session.history[-1].activations  # still readable


def test_a_graph_backpropagated_after_close_is_not_recorded() -> None:
    model = nn.Sequential(nn.Linear(3, 3), nn.ReLU(), nn.Linear(3, 1))
    with watch(model) as session:
        out = model(torch.randn(2, 3))
    recorded = session.history
    out.sum().backward()  # the node pre-hooks on this graph were removed at close
    assert session.history == recorded
    assert recorded[0].gradients == ()
    assert model[0].weight.grad is not None


@pytest.mark.slow
def test_a_forward_with_tens_of_thousands_of_module_calls_frees_without_crashing() -> None:
    # Every hooked output's node gets a Python wrapper; freeing a chain of ~25k such
    # nodes overflows the C stack unless watch holds every 500th (gradprobe._deepfree).
    script = textwrap.dedent(
        """
        import torch
        from torch import nn
        from gradprobe._watch import watch
        torch.set_num_threads(1)
        class Unrolled(nn.Module):
            def __init__(self):
                super().__init__()
                self.cell = nn.Linear(4, 4)

            def forward(self, h):
                for _ in range(30000):
                    h = torch.tanh(self.cell(h))
                return h

        model = Unrolled()
        with watch(model, sample_every=2) as session:
            out = model(torch.randn(2, 4))
            out.sum().backward()
            del out
        print("freed", session.steps, len(session.history[0].activations))
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=False
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "freed 1 30001" in result.stdout
