"""gradprobe.hooks.inventory: every kind of hook, named and located, nothing changed."""

from __future__ import annotations

import json
from collections import OrderedDict
from functools import partial
from pathlib import Path

import pytest
import torch
import torch.nn.modules.module as torch_module
from torch import nn

from gradprobe.errors import GradprobeTypeError
from gradprobe.hooks import GLOBAL_OWNER, inventory

HERE = str(Path(__file__).resolve())


def pre_hook(module: nn.Module, args: tuple[object, ...]) -> None:
    return None


def pre_hook_kwargs(module: nn.Module, args: object, kwargs: object) -> None:
    return None


def fwd_hook(module: nn.Module, args: object, output: object) -> None:
    return None


def fwd_hook_kwargs(module: nn.Module, args: object, kwargs: object, output: object) -> None:
    return None


def full_hook(module: nn.Module, grad_input: object, grad_output: object) -> None:
    return None


def full_pre_hook(module: nn.Module, grad_output: object) -> None:
    return None


def legacy_hook(module: nn.Module, grad_input: object, grad_output: object, name: str = "") -> None:
    return None


def tensor_hook(grad: torch.Tensor) -> None:
    return None


def post_acc_hook(param: torch.Tensor) -> None:
    return None


def node_hook(grad_inputs: object, grad_outputs: object) -> None:
    return None


class Scaler:
    def __call__(self, grad: torch.Tensor) -> torch.Tensor:
        return grad * 2


def _line(fn: object) -> int:
    return fn.__code__.co_firstlineno  # type: ignore[attr-defined]


def _tables(model: nn.Module) -> list[tuple[int, ...]]:
    """Identity of every hook table and value, to check nothing was touched."""
    state = []
    for module in model.modules():
        for name in (
            "_forward_pre_hooks",
            "_forward_hooks",
            "_backward_hooks",
            "_backward_pre_hooks",
        ):
            table = getattr(module, name)
            state.append((id(table), *(id(v) for v in table.values())))
    for param in model.parameters():
        hooks = param._backward_hooks or {}
        state.append(tuple(id(v) for v in hooks.values()))
    return state


def test_lists_every_module_and_parameter_hook_with_names_and_lines() -> None:
    model = nn.Sequential(OrderedDict(fc=nn.Linear(3, 4), act=nn.ReLU(), out=nn.Linear(4, 1)))
    handles = [
        model.register_forward_pre_hook(pre_hook),
        model.register_forward_pre_hook(pre_hook_kwargs, with_kwargs=True),
        model.fc.register_forward_hook(fwd_hook, always_call=True),
        model.fc.register_forward_hook(fwd_hook_kwargs, with_kwargs=True),
        model.fc.register_full_backward_hook(full_hook),
        model.fc.register_full_backward_pre_hook(full_pre_hook),
        model.out.register_backward_hook(partial(legacy_hook, name="out")),
        model.fc.weight.register_hook(tensor_hook),
        model.fc.weight.register_hook(Scaler()),
        model.out.bias.register_post_accumulate_grad_hook(post_acc_hook),
    ]
    try:
        found = inventory(model, include_globals=False)
    finally:
        for handle in handles:
            handle.remove()
    rows = [(e.owner, e.kind, e.hook, e.flags) for e in found]
    assert rows == [
        ("Sequential", "forward_pre", "pre_hook", ()),
        ("Sequential", "forward_pre", "pre_hook_kwargs", ("with_kwargs",)),
        ("fc (Linear)", "forward", "fwd_hook", ("always_call",)),
        ("fc (Linear)", "forward", "fwd_hook_kwargs", ("with_kwargs",)),
        ("fc (Linear)", "backward_pre", "full_pre_hook", ()),
        ("fc (Linear)", "backward", "full_hook", ()),
        ("out (Linear)", "backward_legacy", "partial(legacy_hook, name='out')", ()),
        ("fc.weight", "tensor", "tensor_hook", ()),
        ("fc.weight", "tensor", "Scaler instance", ()),
        ("out.bias", "post_accumulate", "post_acc_hook", ()),
    ]
    by_hook = {e.hook: e for e in found}
    assert (by_hook["pre_hook"].file, by_hook["pre_hook"].line) == (HERE, _line(pre_hook))
    assert by_hook["partial(legacy_hook, name='out')"].line == _line(legacy_hook)
    assert by_hook["Scaler instance"].line == _line(Scaler.__call__)
    assert len(found) == 10


def test_findings_from_hooks_alone() -> None:
    single = nn.Linear(2, 2)
    composite = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
    inplace = nn.ReLU(inplace=True)
    handles = [
        single.register_backward_hook(full_hook),
        composite.register_backward_hook(full_hook),
        inplace.register_full_backward_hook(full_hook),
    ]
    try:
        codes = [
            [(f.code, f.module) for f in inventory(m, include_globals=False).findings()]
            for m in (single, composite, inplace)
        ]
    finally:
        for handle in handles:
            handle.remove()
    assert codes == [[("GP301", "Linear")], [("GP302", "Sequential")], [("GP305", "ReLU")]]
    assert inventory(single, include_globals=False).findings() == []


def test_global_module_hooks_are_listed_once() -> None:
    handles = [
        torch_module.register_module_forward_hook(fwd_hook, always_call=True),
        torch_module.register_module_full_backward_pre_hook(full_pre_hook),
    ]
    try:
        found = inventory(nn.Linear(2, 2))
    finally:
        for handle in handles:
            handle.remove()
    globals_ = [(e.owner, e.kind, e.hook, e.flags) for e in found if e.owner == GLOBAL_OWNER]
    assert globals_ == [
        (GLOBAL_OWNER, "global_forward", "fwd_hook", ("always_call",)),
        (GLOBAL_OWNER, "global_backward_pre", "full_pre_hook", ()),
    ]


def test_tensor_hooks_retain_grad_and_node_hooks() -> None:
    x = torch.ones(3, requires_grad=True)
    y = x * 2
    y.retain_grad()
    y.register_hook(tensor_hook)
    assert y.grad_fn is not None
    y.grad_fn.register_prehook(lambda grad_outputs: None)
    y.grad_fn.register_hook(node_hook)
    rows = [(e.owner, e.kind, e.hook) for e in inventory(y, name="y")]
    assert rows == [
        ("y", "tensor", "tensor_hook"),
        ("y", "retains_grad", "retain_grad"),
        ("MulBackward0", "node_pre", "test_tensor_hooks_retain_grad_and_node_hooks.<lambda>"),
        ("MulBackward0", "node_post", "node_hook"),
    ]


def test_leaf_tensor_shows_its_accumulator_hooks_and_default_name() -> None:
    x = torch.ones(2, 3, requires_grad=True)
    x.register_hook(tensor_hook)
    x.register_post_accumulate_grad_hook(post_acc_hook)
    y = x * 1  # keeps the AccumulateGrad node alive
    accumulator = y.grad_fn.next_functions[0][0]  # type: ignore[union-attr]
    accumulator.register_prehook(lambda grad_outputs: None)
    found = inventory(x, include_globals=False)
    assert found.subject == "tensor (2, 3)"
    assert [(e.kind, e.owner) for e in found] == [
        ("tensor", "tensor (2, 3)"),
        ("post_accumulate", "tensor (2, 3)"),
        ("node_pre", "torch::autograd::AccumulateGrad"),
    ]


def test_legacy_module_hook_on_a_node_is_flagged() -> None:
    layer = nn.Linear(3, 2)
    handle = layer.register_backward_hook(legacy_hook)
    try:
        with pytest.warns(FutureWarning):
            out = layer(torch.ones(1, 3, requires_grad=True))
    finally:
        handle.remove()
    (entry,) = inventory(out, include_globals=False).of_kind("node_post")
    assert (entry.owner, entry.hook, entry.flags) == (
        "AddmmBackward0",
        "legacy_hook",
        ("legacy module hook of Linear",),
    )


def test_inventory_changes_nothing_and_serializes() -> None:
    model = nn.Sequential(nn.Linear(2, 2), nn.Tanh())
    model[0].register_forward_hook(fwd_hook)
    model[0].weight.register_hook(tensor_hook)
    before = _tables(model)
    found = inventory(model)
    assert _tables(model) == before
    data = json.loads(json.dumps(found.to_dict()))
    assert [h["hook"] for h in data["hooks"]] == ["fwd_hook", "tensor_hook"]
    assert data["hooks"][0]["file"] == HERE
    text = str(found)
    assert "0 (Linear)" in text and "fwd_hook" in text and "test_hooks_inventory.py:" in text
    assert repr(found) == "<HookInventory Sequential: 2 hooks>"


def test_no_hooks() -> None:
    found = inventory(nn.Linear(1, 1), include_globals=False)
    assert len(found) == 0
    assert "no hooks on Linear" in str(found)


@pytest.mark.parametrize("bad", [3, "model", [nn.Linear(1, 1)]])
def test_bad_subject(bad: object) -> None:
    with pytest.raises(GradprobeTypeError, match=r"inventory\(\) lists the hooks of an nn\.Module"):
        inventory(bad)  # type: ignore[arg-type]
