"""gradprobe.hooks.timeline: firing order of every hook kind, and nothing left behind."""

from __future__ import annotations

import gc
import weakref
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import pytest
import torch
import torch.nn.modules.module as torch_module
from torch import nn

from gradprobe._nosync import HostSyncError, forbid_host_syncs
from gradprobe.errors import GradprobeTypeError, GradprobeValueError
from gradprobe.hooks import timeline


def named(label: str, result: Any = None) -> Callable[..., Any]:
    """A hook whose name is ``label``, so events can be matched without our naming."""

    def hook(*args: Any) -> Any:
        return result

    hook.__name__ = hook.__qualname__ = label
    return hook


def q5_setup(full: bool) -> tuple[nn.Sequential, torch.Tensor, Callable[[], None]]:
    """TORCH-FACTS Q5: every module, parameter and output hooked, in the same way."""
    net = nn.Sequential(OrderedDict(fc1=nn.Linear(3, 4), act=nn.ReLU(), fc2=nn.Linear(4, 2)))
    labels = {net: "net", net.fc1: "fc1", net.act: "act", net.fc2: "fc2"}
    for module, label in labels.items():
        module.register_forward_pre_hook(named(f"pre {label}"))

        def forward_hook(mod: nn.Module, args: Any, out: torch.Tensor, label: str = label) -> None:
            out.register_hook(named(f"out {label}"))
            assert out.grad_fn is not None
            out.grad_fn.register_prehook(named(f"node-pre {label}"))
            out.grad_fn.register_hook(named(f"node-post {label}"))

        forward_hook.__qualname__ = f"fwd {label}"
        module.register_forward_hook(forward_hook)
        if full:
            module.register_full_backward_pre_hook(named(f"bw-pre {label}"))
            module.register_full_backward_hook(named(f"bw {label}"))
    for name, param in net.named_parameters():
        param.register_hook(named(f"param {name}"))
        param.register_post_accumulate_grad_hook(named(f"post-acc {name}"))
    x = torch.randn(5, 3, requires_grad=True)
    x.register_hook(named("x"))

    def step() -> None:
        out = net(x)
        out.register_hook(named("final output"))
        loss = out.sum()
        loss.register_hook(named("loss"))
        loss.backward()

    return net, x, step


# Transcribed from TORCH-FACTS Q5, "with full backward hooks = True" (both torch versions).
Q5_FULL = [
    ("forward_pre", "pre net"),
    ("forward_pre", "pre fc1"),
    ("forward", "fwd fc1"),
    ("forward_pre", "pre act"),
    ("forward", "fwd act"),
    ("forward_pre", "pre fc2"),
    ("forward", "fwd fc2"),
    ("forward", "fwd net"),
    ("tensor", "loss"),
    ("tensor", "final output"),
    ("backward_pre", "bw-pre net"),
    ("tensor", "out net"),
    ("node_pre", "node-pre net"),
    ("backward_pre", "bw-pre fc2"),
    ("node_post", "node-post net"),
    ("tensor", "out fc2"),
    ("node_pre", "node-pre fc2"),
    ("node_post", "node-post fc2"),
    ("tensor", "param fc2.bias"),
    ("post_accumulate", "post-acc fc2.bias"),
    ("tensor", "param fc2.weight"),
    ("post_accumulate", "post-acc fc2.weight"),
    ("backward", "bw fc2"),
    ("backward_pre", "bw-pre act"),
    ("tensor", "out act"),
    ("node_pre", "node-pre act"),
    ("node_post", "node-post act"),
    ("backward", "bw act"),
    ("backward_pre", "bw-pre fc1"),
    ("tensor", "out fc1"),
    ("node_pre", "node-pre fc1"),
    ("node_post", "node-post fc1"),
    ("tensor", "param fc1.bias"),
    ("post_accumulate", "post-acc fc1.bias"),
    ("tensor", "param fc1.weight"),
    ("post_accumulate", "post-acc fc1.weight"),
    ("backward", "bw fc1"),
    ("backward", "bw net"),
    ("tensor", "x"),
]


def test_order_of_every_hook_kind_matches_torch_facts_q5() -> None:
    net, _, step = q5_setup(full=True)
    found = timeline(step, model=net)
    assert [(e.kind, e.hook) for e in found] == Q5_FULL
    phases = [e.phase for e in found]
    assert phases == ["forward"] * 8 + ["backward"] * (len(Q5_FULL) - 8)


def test_order_without_full_hooks_keeps_node_before_tensor_rule() -> None:
    net, _, step = q5_setup(full=False)
    order = [e.hook for e in timeline(step, model=net)]
    # Q5 run 2: output tensor hooks fire before the node pre-hooks of the same node, and a
    # leaf's tensor hook before its post-accumulate hook.
    assert order[:8] == [hook for _, hook in Q5_FULL[:8]]
    assert order.index("out fc2") < order.index("node-pre fc2") < order.index("node-post fc2")
    assert order.index("param fc1.bias") < order.index("post-acc fc1.bias")
    assert order.index("node-post fc2") < order.index("out act") < order.index("out fc1")
    assert sorted(order) == sorted(
        hook for kind, hook in Q5_FULL if not kind.startswith("backward")
    )


def test_targets_are_named_by_model_paths() -> None:
    net, x, step = q5_setup(full=True)
    found = timeline(step, model=net, names={"x": x})
    targets = {e.hook: e.target for e in found}
    assert targets["pre net"] == "Sequential"
    assert targets["bw fc2"] == "fc2 (Linear)"
    assert targets["param fc1.weight"] == "fc1.weight"
    assert targets["x"] == "x"
    assert targets["node-pre fc2"] == "AddmmBackward0"
    assert targets["loss"] == "loss () ← SumBackward0"
    nodes = {e.hook: e.node for e in found}
    assert nodes["post-acc fc1.bias"] == "AccumulateGrad"
    assert nodes["pre net"] is None


def test_names_from_the_callers_variables_without_a_model() -> None:
    model = nn.Sequential(nn.Linear(2, 2))
    inputs = torch.ones(1, 2, requires_grad=True)
    inputs.register_hook(named("input hook"))
    model[0].register_forward_hook(named("fwd"))
    found = timeline(lambda: model(inputs).sum().backward())
    assert [(e.target, e.hook) for e in found] == [
        ("model.0 (Linear)", "fwd"),
        ("inputs (1, 2)", "input hook"),
    ]


def _state(model: nn.Module, tensors: list[torch.Tensor]) -> list[Any]:
    state: list[Any] = []
    for module in model.modules():
        state.extend(
            (table, list(getattr(module, table).items()))
            for table in ("_forward_pre_hooks", "_forward_hooks", "_backward_hooks")
        )
        state.append(("pre", list(module._backward_pre_hooks.items())))
    for tensor in [*model.parameters(), *tensors]:
        state.append(list((tensor._backward_hooks or {}).items()))
        state.append(list((tensor._post_accumulate_grad_hooks or {}).items()))
    state.extend(
        list(getattr(torch_module, name).items())
        for name in ("_global_forward_hooks", "_global_backward_hooks", "_global_forward_pre_hooks")
    )
    patched = (
        nn.Module.register_forward_hook,
        nn.Module.register_backward_hook,
        nn.Module.register_full_backward_hook,
        torch.Tensor.register_hook,
        torch.Tensor.register_post_accumulate_grad_hook,
        torch.autograd.backward,
        torch.autograd.grad,
        torch_module.register_module_forward_hook,
    )
    state.append([id(fn) for fn in patched])
    return state


def test_everything_is_restored_also_when_fn_raises() -> None:
    net, x, step = q5_setup(full=True)
    global_handle = torch_module.register_module_forward_hook(named("global fwd"))
    try:
        before = _state(net, [x])

        def failing() -> None:
            step()
            net.fc1.register_forward_hook(named("added inside"))
            raise KeyError("boom")

        with pytest.raises(KeyError, match="boom"):
            timeline(failing)
        after = _state(net, [x])
    finally:
        global_handle.remove()
    # the hook added inside fn stays (the user added it), as the user's own callable
    added = after[5][1].pop()  # fc1's _forward_hooks (4 tables per module, net first)
    assert added[1].__name__ == "added inside" and not hasattr(added[1], "__gradprobe_hook__")
    assert after == before


def test_gradients_are_bit_identical_and_hooks_still_modify() -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
    model[0].register_full_backward_hook(lambda m, gi, go: (gi[0] * 3,))
    model[2].weight.register_hook(lambda g: g * 0.5)
    x = torch.randn(6, 4, requires_grad=True)

    def run() -> None:
        model.zero_grad()
        x.grad = None
        model(x).pow(2).sum().backward()

    run()
    plain = [p.grad.clone() for p in model.parameters()] + [x.grad.clone()]  # type: ignore[union-attr]
    found = timeline(run)
    traced = [p.grad for p in model.parameters()] + [x.grad]
    assert all(torch.equal(a, b) for a, b in zip(plain, traced, strict=True))  # type: ignore[arg-type]
    assert [e.kind for e in found] == ["tensor", "backward"]


def test_retain_grad_fires_after_the_tensor_hooks_and_leaves_nothing_behind() -> None:
    layer = nn.Linear(3, 2)
    kept = torch.randn(4, 3) @ torch.randn(3, 3).requires_grad_()
    kept.retain_grad()  # retaining before the call: found by the scan
    tables_before = dict(kept._backward_hooks or {})

    def step() -> None:
        y = layer(kept)
        y.retain_grad()  # after or before its tensor hook: retain_grad always runs last
        y.register_hook(named("double", result=None))
        y.register_hook(lambda g: g * 2)
        assert y.grad_fn is not None
        y.grad_fn.register_prehook(named("node pre"))
        y.sum().backward()
        step.y = y  # type: ignore[attr-defined]

    found = timeline(step, names={"kept": kept})
    y = step.y  # type: ignore[attr-defined]
    kinds = [(e.kind, e.hook.rsplit(".", 1)[-1]) for e in found]
    at = kinds.index(("tensor", "double"))
    assert kinds[at : at + 4] == [
        ("tensor", "double"),
        ("tensor", "<lambda>"),
        ("retains_grad", "retain_grad"),
        ("node_pre", "node pre"),
    ]
    retains = [e for e in found if e.kind == "retains_grad"]
    assert [e.target for e in retains][1] == "kept"
    assert all(e.phase == "backward" for e in retains)
    # .grad holds the value after the hooks, and only the user's two hooks stay on y
    assert torch.equal(y.grad, torch.full((4, 2), 2.0))
    assert len(y._backward_hooks) == 2
    assert dict(kept._backward_hooks or {}) == tables_before


def test_legacy_and_global_hooks_are_recorded() -> None:
    model = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
    model[0].register_backward_hook(named("legacy"))
    handle = torch_module.register_module_forward_hook(named("everywhere"))
    try:
        with pytest.warns(FutureWarning):
            found = timeline(lambda: model(torch.ones(1, 2)).sum().backward(), model=model)
    finally:
        handle.remove()
    assert [(e.kind, e.target, e.hook) for e in found] == [
        ("global_forward", "0 (Linear)", "everywhere"),
        ("global_forward", "1 (ReLU)", "everywhere"),
        ("global_forward", "Sequential", "everywhere"),
        ("backward_legacy", "0 (Linear)", "legacy"),
    ]


def test_hooks_registered_inside_and_autograd_grad() -> None:
    w = torch.ones(3, requires_grad=True)

    def fn() -> None:
        y = (w * 2).sin()
        y.register_hook(named("on y"))
        assert y.grad_fn is not None
        y.grad_fn.register_prehook(named("node pre"))
        torch.autograd.grad(y.sum(), [w])

    found = timeline(fn)
    assert [(e.kind, e.hook) for e in found] == [("tensor", "on y"), ("node_pre", "node pre")]
    assert found.events[1].target == "SinBackward0"


def test_no_host_syncs_inside_the_recording_wrappers() -> None:
    net, _, step = q5_setup(full=True)
    with forbid_host_syncs():
        found = timeline(step, model=net)
    assert len(found) == len(Q5_FULL)


def test_a_user_hook_may_still_sync() -> None:
    layer = nn.Linear(2, 1)
    values: list[float] = []
    layer.register_full_backward_hook(lambda m, gi, go: values.append(go[0].sum().item()))
    with forbid_host_syncs():
        timeline(lambda: layer(torch.ones(3, 2, requires_grad=True)).sum().backward())
    assert values == [3.0]
    with forbid_host_syncs(), pytest.raises(HostSyncError):
        from gradprobe._nosync import hook_body

        hook_body(lambda: torch.ones(1).item())()


def test_keeps_no_tensor_alive() -> None:
    holder = [torch.ones(4, requires_grad=True)]
    holder[0].register_hook(named("x"))
    ref = weakref.ref(holder[0])
    found = timeline(lambda: (holder[0] * holder[0]).sum().backward())
    holder.clear()
    gc.collect()
    assert ref() is None
    assert [e.hook for e in found] == ["x"]


def test_a_variable_read_for_naming_is_not_kept_alive() -> None:
    x = torch.ones(4, requires_grad=True)
    x.register_hook(named("x"))
    ref = weakref.ref(x)
    found = timeline(lambda: torch.autograd.backward([ref().sum()]))  # type: ignore[union-attr]
    del x
    gc.collect()
    assert ref() is None  # the caller's frame holds no snapshot of its locals
    assert [(e.target, e.hook) for e in found] == [("x (4,)", "x")]


def test_deep_graph_with_node_hooks() -> None:
    x = torch.ones(2, requires_grad=True)

    def fn() -> None:
        y = x
        for step in range(2500):
            y = y * 1.0 if step % 2 else y + 0.0
        assert y.grad_fn is not None
        y.grad_fn.register_hook(named("top"))
        y.sum().backward()

    found = timeline(fn, max_nodes=600)
    assert [e.hook for e in found] == ["top"]
    assert found.notes == (
        "node hooks were looked for on the first 600 autograd nodes only (max_nodes=600)",
    )
    assert torch.equal(x.grad, torch.ones(2))  # type: ignore[arg-type]


def test_rendering_and_dict() -> None:
    net, _, step = q5_setup(full=True)
    found = timeline(step, model=net)
    text = str(found)
    assert f"hook timeline ({len(Q5_FULL)} calls)" in text
    assert "bw-pre fc2" in text and "BackwardHookFunctionBackward" in text
    data = found.to_dict()
    assert data["events"][0] == {
        "index": 0,
        "phase": "forward",
        "kind": "forward_pre",
        "target": "Sequential",
        "hook": "pre net",
        "file": __file__,
        "line": named.__code__.co_firstlineno + 3,
        "node": None,
    }
    assert found.order()[0] == ("forward_pre", "Sequential")
    assert repr(found) == f"<HookTimeline {len(Q5_FULL)} hook calls>"
    assert "no hook fired" in str(timeline(lambda: None))


def test_bad_arguments() -> None:
    with pytest.raises(GradprobeTypeError, match="timeline\\(\\) runs a function"):
        timeline(42)  # type: ignore[arg-type]
    with pytest.raises(GradprobeValueError, match="max_nodes"):
        timeline(lambda: None, max_nodes=0)
    with pytest.raises(
        GradprobeTypeError,
        match=r"timeline\(names=...\) takes a mapping from names to tensors, got 5",
    ):
        timeline(lambda: None, names=5)  # type: ignore[arg-type]
    with pytest.raises(GradprobeTypeError, match=r"got \{'x': 1\} \(a dict\)"):
        timeline(lambda: None, names={"x": 1})  # type: ignore[dict-item]
    with pytest.raises(GradprobeTypeError, match=r"timeline\(model=...\) names modules"):
        timeline(lambda: None, model="net")  # type: ignore[arg-type]
