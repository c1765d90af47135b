"""The hook probe of the recorder: GP301-GP306 with the line to change as the cause."""

from __future__ import annotations

import functools
import gc
import runpy
import textwrap
import warnings
import weakref
from pathlib import Path
from typing import Any

import pytest
import torch
import torch.nn.modules.module as torch_module
from torch import nn
from torch.utils.hooks import BackwardHook

from gradprobe.checks import registered
from gradprobe.checks.hooks import HookRegistrations
from gradprobe.findings import Finding
from gradprobe.hooks import HookProbe


def run(tmp_path: Path, source: str) -> tuple[list[Finding], BaseException | None, Path]:
    path = tmp_path / "script.py"
    path.write_text(textwrap.dedent(source).lstrip())
    probe = HookProbe()
    probe.start()
    error: BaseException | None = None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            runpy.run_path(str(path), run_name="__main__")
    except Exception as caught:  # noqa: BLE001 - the script's own error is data here
        error = caught
    finally:
        probe.stop()
    return probe.findings(error), error, path


def line(path: Path, text: str) -> int:
    (number,) = [i for i, src in enumerate(path.read_text().splitlines(), 1) if text in src]
    return number


def roles(finding: Finding) -> list[tuple[str, int]]:
    return [(loc.role, loc.line) for loc in finding.locations]


def test_registered_as_a_recorder_check() -> None:
    assert HookRegistrations in registered()
    assert isinstance(HookRegistrations().probe, HookProbe)


def test_legacy_hooks_on_linear_and_conv_report_the_received_layout(tmp_path: Path) -> None:
    findings, error, path = run(
        tmp_path,
        """
        import torch
        from functools import partial
        from torch import nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(1, 4, 3)
                self.fc = nn.Linear(5, 3)

            def forward(self, img, vec):
                return self.conv(img).sum() + self.fc(vec).sum()

        def show(module, grad_input, grad_output, name=None):
            pass

        model = Net()
        for name, module in model.named_modules():
            if isinstance(module, (nn.Linear, nn.Conv2d)):
                module.register_backward_hook(partial(show, name=name))
        out = model(torch.randn(2, 1, 5, 5, requires_grad=True), torch.randn(2, 5, requires_grad=True))
        out.backward()
        """,
    )
    assert error is None
    register = line(path, "register_backward_hook")
    assert [(f.code, f.module, f.node) for f in findings] == [
        ("GP301", "model.conv (Conv2d)", "ConvolutionBackward0"),
        ("GP301", "model.fc (Linear)", "AddmmBackward0"),
    ]
    assert all(roles(f) == [("cause", register)] for f in findings)
    conv, fc = findings
    assert "(grad of input 0 (2, 1, 5, 5), grad of weight (4, 1, 3, 3), grad of bias (4,)" in (
        conv.message
    )
    assert (
        "(grad of bias (3,) [summed over the batch], grad of input 0 (2, 5), "
        "grad of weight, transposed (5, 3))" in fc.message
    )
    assert [s["role"] for s in fc.details["grad_input"]] == ["param", "input", "param_t"]
    assert fc.details["grad_output_shapes"] == [[2, 3]]
    assert fc.details["hook"] == "partial(show, name='fc')"


def test_legacy_hook_on_a_composite_module_sees_the_last_op(tmp_path: Path) -> None:
    findings, error, path = run(
        tmp_path,
        """
        import torch
        from torch import nn

        def hook(m, grad_input, grad_output):
            pass

        model = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 2))
        model.register_backward_hook(hook)
        x = torch.randn(3, 4, requires_grad=True)
        model(x).sum().backward()
        """,
    )
    assert error is None
    (finding,) = findings
    assert (finding.code, finding.module, finding.node) == (
        "GP302",
        "model (Sequential)",
        "AddmmBackward0",
    )
    assert roles(finding) == [("cause", line(path, "model.register_backward_hook"))]
    assert "grad of an intermediate value (the result of ReluBackward0) (3, 6)" in finding.message


def test_legacy_hook_on_linear_with_3d_input(tmp_path: Path) -> None:
    findings, _, _ = run(
        tmp_path,
        """
        import torch
        from torch import nn
        fc = nn.Linear(3, 5)
        fc.register_backward_hook(lambda m, gi, go: None)
        fc(torch.randn(4, 7, 3, requires_grad=True)).sum().backward()
        """,
    )
    (finding,) = findings
    assert (finding.code, finding.node) == ("GP302", "ViewBackward0")
    assert "(the result of AddmmBackward0) (28, 5)" in finding.message


def test_full_hook_with_inplace_relu_names_module_creation_and_call(tmp_path: Path) -> None:
    findings, error, path = run(
        tmp_path,
        """
        import torch
        from torch import nn

        mod = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1),
                            nn.ReLU(inplace=True))

        def hook_g(m, grad_input, grad_output):
            pass

        mod[2].register_full_backward_hook(hook_g)
        out = mod(torch.rand((1, 3, 16, 16)))
        """,
    )
    assert isinstance(error, RuntimeError)
    (finding,) = findings
    assert (finding.code, finding.module) == ("GP305", "mod.2 (Conv2d)")
    assert roles(finding) == [
        ("cause", line(path, "register_full_backward_hook")),
        ("created", line(path, "nn.ReLU(inplace=True)")),
        ("error", line(path, "out = mod(")),
    ]
    assert "mod.3 (ReLU) then modified one in place" in finding.message
    assert "BackwardHookFunction" in finding.message


def test_inplace_write_by_the_user_on_a_hooked_output(tmp_path: Path) -> None:
    findings, _, path = run(
        tmp_path,
        """
        import torch
        from torch import nn
        lin = nn.Linear(3, 3)
        lin.register_full_backward_pre_hook(lambda m, go: None)
        y = lin(torch.randn(2, 3, requires_grad=True))
        y.relu_()
        """,
    )
    (finding,) = findings
    assert (finding.code, finding.module) == ("GP305", "lin (Linear)")
    assert roles(finding) == [
        ("cause", line(path, "register_full_backward_pre_hook")),
        ("error", line(path, "y.relu_()")),
    ]


def test_global_full_hook_with_inplace_module(tmp_path: Path) -> None:
    findings, _, path = run(
        tmp_path,
        """
        import torch
        from torch import nn
        from torch.nn.modules.module import register_module_full_backward_hook
        net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(inplace=True))
        handle = register_module_full_backward_hook(lambda m, gi, go: None)
        try:
            net(torch.randn(2, 3, requires_grad=True))
        finally:
            handle.remove()
        """,
    )
    (finding,) = findings
    assert finding.code == "GP305"
    assert roles(finding)[0] == ("cause", line(path, "register_module_full_backward_hook(lambda"))
    assert "global full backward hook" in finding.message


def test_forward_called_directly_on_a_hooked_module(tmp_path: Path) -> None:
    findings, _, path = run(
        tmp_path,
        """
        import torch
        from torch import nn

        class Scaled(nn.Linear):
            def forward(self, x):
                return super().forward(x) * 2

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = Scaled(3, 3)
                self.out = nn.Linear(3, 1)

            def forward(self, x):
                return self.out.forward(self.fc(x))

        net = Net()
        net.out.register_forward_hook(lambda m, a, o: None)
        net.fc.register_forward_hook(lambda m, a, o: None)
        net(torch.randn(2, 3)).sum().backward()
        net.fc.forward(torch.randn(2, 3))
        """,
    )
    assert [(f.code, f.module) for f in findings] == [
        ("GP304", "net.out (Linear)"),
        ("GP304", "net.fc (Scaled)"),
    ]
    assert roles(findings[0]) == [
        ("cause", line(path, "self.out.forward(")),
        ("registered", line(path, "net.out.register_forward_hook")),
    ]
    assert roles(findings[1])[0] == ("cause", line(path, "net.fc.forward("))


def test_dict_output_with_full_hook(tmp_path: Path) -> None:
    findings, _, path = run(
        tmp_path,
        """
        import torch
        from torch import nn

        class D(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(3, 3)

            def forward(self, x):
                return {"y": self.lin(x)}

        d = D()
        d.register_full_backward_hook(lambda m, gi, go: None)
        d(torch.randn(2, 3, requires_grad=True))["y"].sum().backward()
        """,
    )
    (finding,) = findings
    assert (finding.code, finding.module) == ("GP306", "d (D)")
    assert roles(finding) == [("cause", line(path, "d.register_full_backward_hook"))]


def test_none_grad_input_is_a_cause_only_when_the_hook_fails(tmp_path: Path) -> None:
    quiet, error, path = run(
        tmp_path,
        """
        import torch
        from torch import nn
        net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
        stash = []
        net[0].register_full_backward_hook(lambda m, gi, go: stash.append(gi[0]))
        net(torch.randn(2, 3)).sum().backward()
        """,
    )
    assert error is None
    (finding,) = quiet
    assert finding.code == "GP303" and finding.cause is None
    assert roles(finding) == [("registered", line(path, "register_full_backward_hook"))]

    failing, error, path = run(
        tmp_path,
        """
        import torch
        from torch import nn
        net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
        def hook(m, gi, go):
            print(gi[0].norm())
        for layer in net:
            layer.register_full_backward_hook(hook)
        net(torch.randn(2, 3)).sum().backward()
        """,
    )
    assert isinstance(error, AttributeError)
    (finding,) = failing
    assert (finding.code, finding.module) == ("GP303", "net.0 (Linear)")
    assert roles(finding) == [
        ("cause", line(path, "gi[0].norm()")),
        ("registered", line(path, "layer.register_full_backward_hook")),
    ]


def test_hooks_that_cope_with_none_grad_input_are_not_named(tmp_path: Path) -> None:
    findings, error, _ = run(
        tmp_path,
        """
        import torch
        from torch import nn
        net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
        norms = {}
        def log_output(module, grad_input, grad_output):
            norms[id(module)] = grad_output[0].norm()
        def log_both(module, grad_input, grad_output):
            gi = grad_input[0]
            norms[id(module)] = (grad_output[0].norm(), None if gi is None else gi.norm())
        net[0].register_full_backward_hook(log_output)
        net[0].register_full_backward_hook(log_both)
        net[2].register_full_backward_hook(lambda m, gi, go: None)
        net(torch.randn(2, 3)).sum().backward()
        """,
    )
    assert error is None
    assert findings == []


def test_copes_with_none_reads_the_hook_source() -> None:
    from gradprobe.hooks._copes import copes_with_none

    kept: list[object] = []

    def never_reads(module: object, grad_input: tuple, grad_output: tuple) -> None:
        kept.append(grad_output[0])

    def checks(module: object, gi: tuple, go: tuple) -> object:
        return None if gi[0] is None else (gi[0] * 2,)

    def trusts(module: object, gi: tuple, go: tuple) -> None:
        kept.append(gi[0].norm())

    class Logger:
        def hook(self, module: object, grad_input: tuple, grad_output: tuple) -> None:
            kept.append(grad_input)

    assert copes_with_none(never_reads) is True
    assert copes_with_none(checks) is True
    assert copes_with_none(lambda m, gi, go: None) is True
    assert copes_with_none(trusts) is False
    assert copes_with_none(lambda m, gi, go: kept.append(gi[0])) is False
    assert copes_with_none(Logger().hook) is False
    assert copes_with_none(functools.partial(trusts)) is False  # no source: assume not


def test_harmless_hooks_give_no_findings(tmp_path: Path) -> None:
    findings, error, _ = run(
        tmp_path,
        """
        import torch
        from torch import nn
        net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(inplace=True), nn.Linear(4, 1))
        acts = {}
        def keep(m, a, o):
            acts["fc"] = o.detach()
        net[0].register_forward_hook(keep)
        net[2].register_full_backward_hook(lambda m, gi, go: None)
        net[2].register_full_backward_pre_hook(lambda m, go: None)
        x = torch.randn(2, 3, requires_grad=True)
        x.register_hook(lambda g: g * 2)
        net(x).sum().backward()
        net.forward(x)
        """,
    )
    assert error is None
    assert findings == []


def _patched_state() -> list[Any]:
    names = [
        "register_forward_pre_hook",
        "register_forward_hook",
        "register_backward_hook",
        "register_full_backward_hook",
        "register_full_backward_pre_hook",
        "__init__",
        "_maybe_warn_non_full_backward_hook",
    ]
    state: list[Any] = [vars(nn.Module).get(name) for name in names]
    state += [vars(BackwardHook).get(n) for n in ("setup_output_hook", "setup_input_hook")]
    state += [getattr(torch_module, n) for n in dir(torch_module) if n.startswith("register_")]
    state += [vars(nn.Linear).get("forward"), "forward" in vars(nn.Conv2d)]
    return state


def test_stop_restores_everything_and_is_idempotent(tmp_path: Path) -> None:
    before = _patched_state()
    findings, error, _ = run(
        tmp_path,
        """
        import torch
        from torch import nn
        lin = nn.Linear(2, 2)
        lin.register_backward_hook(lambda m, gi, go: None)
        lin.register_forward_hook(lambda m, a, o: None)
        raise KeyError("the script fails")
        """,
    )
    assert isinstance(error, KeyError)
    assert [f.code for f in findings] == ["GP301"]  # a hook that never fired is still legacy
    assert _patched_state() == before
    probe = HookProbe()
    probe.start()
    probe.start()
    probe.stop()
    probe.stop()
    assert _patched_state() == before


def test_wrapped_hooks_are_put_back_and_gradients_unchanged() -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    x = torch.randn(5, 3, requires_grad=True)

    def scale(module: nn.Module, grad_input: Any, grad_output: Any) -> tuple[torch.Tensor]:
        return (grad_input[0] * 3,)

    handle = model[2].register_full_backward_hook(scale)
    model(x).sum().backward()
    plain = [p.grad.clone() for p in model.parameters()]  # type: ignore[union-attr]
    handle.remove()
    model.zero_grad()
    probe = HookProbe()
    probe.start()
    try:
        model[2].register_full_backward_hook(scale)
        assert model[2]._backward_hooks[next(iter(model[2]._backward_hooks))] is not scale
        model(x).sum().backward()
    finally:
        probe.stop()
    assert list(model[2]._backward_hooks.values()) == [scale]
    traced = [p.grad for p in model.parameters()]
    assert all(torch.equal(a, b) for a, b in zip(plain, traced, strict=True))  # type: ignore[arg-type]
    assert probe.findings(None) == []


def test_warnings_still_point_at_torch(tmp_path: Path) -> None:
    probe = HookProbe()
    probe.start()
    try:
        layer = nn.Linear(2, 2)
        layer.register_backward_hook(lambda m, gi, go: None)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            layer(torch.ones(1, 2, requires_grad=True))
    finally:
        probe.stop()
    (warning,) = caught
    assert warning.category is FutureWarning
    assert Path(warning.filename).name == "module.py"
    assert "torch" in Path(warning.filename).parts


def test_keeps_no_module_alive() -> None:
    probe = HookProbe()
    probe.start()
    try:
        layer = nn.Linear(2, 2)
        layer.register_backward_hook(lambda m, gi, go: None)
        with pytest.warns(FutureWarning):
            layer(torch.ones(1, 2, requires_grad=True)).sum().backward()
    finally:
        probe.stop()
    ref = weakref.ref(layer)
    del layer
    gc.collect()
    assert ref() is None
    assert [f.code for f in probe.findings(None)] == ["GP301"]


def test_through_gradprobe_record(tmp_path: Path) -> None:
    record = pytest.importorskip("gradprobe._record").record
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        with record() as recording:
            seq = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
            seq.register_backward_hook(lambda m, gi, go: None)
            seq(torch.ones(4, 2, requires_grad=True)).sum().backward()
    codes = [f.code for f in recording.findings]
    assert "GP302" in codes
    (finding,) = [f for f in recording.findings if f.code == "GP302"]
    assert finding.cause is not None and finding.cause.file == str(Path(__file__).resolve())


def test_no_host_syncs_in_the_probe_wrappers() -> None:
    from gradprobe._nosync import forbid_host_syncs

    probe = HookProbe()
    probe.start()
    try:
        with forbid_host_syncs(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            first = nn.Linear(3, 4)
            second = nn.Sequential(nn.ReLU(), nn.Linear(4, 1))
            kept: list[object] = []
            first.register_full_backward_hook(lambda m, gi, go: kept.append(gi))
            second.register_backward_hook(lambda m, gi, go: None)
            second(first(torch.randn(2, 3))).sum().backward()
    finally:
        probe.stop()
    assert sorted(f.code for f in probe.findings(None)) == ["GP302", "GP303"]


def test_explain_and_timeline_inside_a_recording_are_not_reported(tmp_path: Path) -> None:
    findings, error, path = run(
        tmp_path,
        """
        import torch
        from torch import nn
        from gradprobe.hooks import explain, timeline
        layer = nn.Linear(3, 2)
        explain(layer)
        explain(nn.Sequential(layer, nn.ReLU(inplace=True)), torch.randn(2, 3))
        timeline(lambda: layer(torch.ones(1, 3)).sum().backward())
        layer.register_backward_hook(lambda m, gi, go: None)
        """,
    )
    assert error is None
    assert [(f.code, roles(f)) for f in findings] == [
        ("GP301", [("cause", line(path, "layer.register_backward_hook"))])
    ]
