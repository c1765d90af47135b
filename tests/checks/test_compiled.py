"""torch.compile: GP501 (a module hook registered after the compiled model ran), GP502
(graph breaks with dynamo's reason and the user's line), GP503 (what a recording of a
compiled model does not observe). Real dynamo, ``eager`` and ``aot_eager`` backends."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch
from _run import diagnose, line_of, roles
from torch import nn

import gradprobe
from gradprobe.checks import compiled
from gradprobe.diagnose import diagnose_script

dynamo = pytest.importorskip("torch._dynamo")


def notes(tmp_path: Path, source: str) -> tuple[list[gradprobe.Finding], str]:
    """What ``diagnose`` reports as notes (what it could not observe), and the script;
    a note never counts among the findings."""
    script = tmp_path / "train.py"
    text = textwrap.dedent(source).lstrip("\n")
    script.write_text(text)
    result = diagnose_script(script)
    assert not any(finding.is_note for finding in result.findings)
    return list(result.notes), text


@pytest.fixture(autouse=True)
def _fresh_dynamo() -> Iterator[None]:
    dynamo.reset()
    yield
    dynamo.reset()


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(4, 5)
        self.fc2 = nn.Linear(5, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.fc1(x).relu())


# -- the fact GP501 stands on, without gradprobe ---------------------------------------------


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_without_gradprobe_a_hook_added_after_the_first_compiled_call_never_runs(
    backend: str,
) -> None:
    net = Net()
    model = torch.compile(net, backend=backend)
    x = torch.randn(3, 4)
    model(x).sum().backward()
    calls: list[str] = []
    net.fc1.register_forward_hook(lambda m, a, o: calls.append("forward"))
    net.fc2.register_full_backward_hook(lambda m, gi, go: calls.append("backward"))
    net.fc1.weight.register_hook(lambda g: calls.append("tensor"))
    model(x).sum().backward()
    # module hooks are skipped; a tensor hook on a parameter runs in autograd and fires
    assert calls == ["tensor"]
    dynamo.reset()  # the documented fix: the next call recompiles with the hooks
    model(x).sum().backward()
    assert sorted(calls) == ["backward", "forward", "tensor", "tensor"]


# -- GP501 ------------------------------------------------------------------------------------

_LATE = """
import torch
from torch import nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 5)
        self.fc2 = nn.Linear(5, 2)

    def forward(self, x):
        return self.fc2(self.fc1(x).relu())

net = Net()
model = torch.compile(net, backend=BACKEND)  # compiled here
x = torch.randn(3, 4)
model(x).sum().backward()
"""


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_a_hook_registered_after_the_compiled_model_ran_is_named(
    tmp_path: Path, backend: str
) -> None:
    found, text = diagnose(
        tmp_path,
        _LATE.replace("BACKEND", repr(backend))
        + """
acts = []
net.fc1.register_forward_hook(lambda m, a, o: acts.append(o))  # too late
for _ in range(2):
    model(x).sum().backward()
""",
    )
    (finding,) = [f for f in found if f.code == "GP501"]
    assert roles(finding) == [
        ("cause", line_of(text, "# too late")),
        ("created", line_of(text, "# compiled here")),
    ]
    assert finding.module == "fc1 (Linear)"
    assert finding.details["hook_kind"] == "forward"
    assert finding.details["calls_without_hook"] == 2
    assert "torch._dynamo.reset()" in finding.hint


@pytest.mark.parametrize(
    "late",
    [
        # registered before the first call: compiled in
        "FIRST",
        # torch._dynamo.reset() after registering: the next call recompiles with it
        "net.fc1.register_forward_hook(lambda m, a, o: None)\ntorch._dynamo.reset()",
        # a parameter's tensor hook runs in autograd and fires
        "net.fc1.weight.register_hook(lambda g: None)",
        # never called again after registering: nothing was missed
        "END",
        # the next call is in eval mode: dynamo's guard on `training` recompiles
        "net.fc1.register_forward_hook(lambda m, a, o: None)\nnet.eval()",
    ],
    ids=["before-first-call", "reset", "tensor-hook", "no-later-call", "eval-recompiles"],
)
def test_hooks_dynamo_does_see_are_not_reported(tmp_path: Path, late: str) -> None:
    source = _LATE.replace("BACKEND", "'aot_eager'")
    if late == "FIRST":
        source = source.replace(
            "x = torch.randn(3, 4)\n",
            "x = torch.randn(3, 4)\nnet.fc1.register_forward_hook(lambda m, a, o: None)\n",
        )
        late = ""
    if late == "END":
        source += "net.fc1.register_forward_hook(lambda m, a, o: None)\n"
    else:
        source += late + "\nmodel(x).sum().backward()\n"
    found, _ = diagnose(tmp_path, source)
    assert [f.code for f in found if f.code == "GP501"] == []


def test_a_second_hook_of_a_kind_the_module_already_had_is_not_reported(tmp_path: Path) -> None:
    # dynamo guards on a hook table that was not empty: the new hook makes it recompile
    found, _ = diagnose(
        tmp_path,
        _LATE.replace("BACKEND", "'aot_eager'").replace(
            "net = Net()\n", "net = Net()\nnet.fc1.register_forward_hook(lambda m, a, o: None)\n"
        )
        + """
net.fc1.register_forward_hook(lambda m, a, o: None)
model(x).sum().backward()
""",
    )
    assert [f.code for f in found if f.code == "GP501"] == []


# -- GP502 ------------------------------------------------------------------------------------

_BREAKING = """
import torch
from torch import nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 5)
        self.fc2 = nn.Linear(5, 2)

    def forward(self, x):
        h = self.fc1(x).relu()
        print("hidden", tuple(h.shape))  # breaks the graph
        return self.fc2(h)

model = torch.compile(Net(), backend="aot_eager")
for _ in range(2):
    model(torch.randn(3, 4)).sum().backward()
"""


def test_a_graph_break_is_named_with_dynamos_reason_and_the_line(tmp_path: Path) -> None:
    found, text = diagnose(tmp_path, _BREAKING)
    breaks = [f for f in found if f.code == "GP502"]
    (finding,) = breaks  # gradprobe's own breaks (its recorder, its hooks) are left out
    assert roles(finding) == [("cause", line_of(text, "# breaks the graph"))]
    assert finding.details["reason"] == "Failed to trace builtin operator"
    assert "print" in finding.message
    assert finding.hint.startswith("dynamo suggests:")


def test_a_branch_on_a_tensor_value_is_named_in_the_users_function(tmp_path: Path) -> None:
    found, text = diagnose(
        tmp_path,
        _BREAKING.replace(
            'print("hidden", tuple(h.shape))  # breaks the graph',
            "if h.sum() > 0:  # breaks the graph\n            h = h * 2",
        ),
    )
    (finding,) = [f for f in found if f.code == "GP502"]
    assert roles(finding) == [("cause", line_of(text, "# breaks the graph"))]
    assert finding.cause is not None and finding.cause.function == "forward"
    assert "branch on a tensor's value" in finding.message


def test_record_reports_the_hook_and_the_graph_break_in_process() -> None:
    def forward(self: Net, x: torch.Tensor) -> torch.Tensor:
        h = self.fc1(x).relu()
        print(end="")  # a graph break in this test file
        return self.fc2(h)

    class Printing(Net):
        pass

    Printing.forward = forward  # type: ignore[method-assign]
    x = torch.randn(3, 4)
    with gradprobe.record() as rec:
        net = Printing()
        model = torch.compile(net, backend="aot_eager")
        model(x).sum().backward()
        handle = net.fc2.register_forward_pre_hook(lambda m, a: None)
        model(x).sum().backward()
    handle.remove()
    codes = [f.code for f in rec.findings]
    assert codes == ["GP501", "GP502"]  # GP503 is a note: not a problem
    late, graph_break = rec.findings
    (region,) = rec.notes
    assert rec.to_dict()["notes"][0]["code"] == "GP503"
    assert "note GP503: Compiled models ran while recording" in str(rec)
    assert late.details["hook_kind"] == "forward pre"
    assert late.cause is not None and late.cause.text is not None
    assert "register_forward_pre_hook" in late.cause.text
    assert graph_break.cause is not None and graph_break.cause.function == "forward"
    assert region.details["compiled_calls"] == 2


def test_a_tensor_hook_in_compiled_code_gives_no_break_of_gradprobes_making() -> None:
    # gradprobe patches Tensor.register_hook while recording; dynamo must not trace the
    # patch (it used to break the graph twice and warn about sys._getframe)
    import warnings

    class Hooked(Net):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            h = self.fc1(x)
            h.register_hook(lambda g: g * 2)
            return self.fc2(h.relu())

    x = torch.randn(3, 4)
    net = Hooked()
    model = torch.compile(net, backend="aot_eager")
    model(x).sum().backward()
    plain = net.fc1.weight.grad.clone()  # type: ignore[union-attr]
    net.zero_grad()
    dynamo.reset()
    with warnings.catch_warnings(record=True) as caught, gradprobe.record() as rec:
        warnings.simplefilter("always")
        model(x).sum().backward()
    assert torch.equal(net.fc1.weight.grad, plain)  # type: ignore[arg-type]
    assert rec.findings == []
    assert [f.code for f in rec.notes] == ["GP503"]
    assert not [w for w in caught if "_getframe" in str(w.message)]


# -- GP503 and what gradprobe must not disturb ----------------------------------------------------


def test_a_recording_of_a_compiled_model_says_what_it_did_not_see(tmp_path: Path) -> None:
    found, text = notes(tmp_path, _LATE.replace("BACKEND", "'aot_eager'"))
    (finding,) = [f for f in found if f.code == "GP503"]
    assert roles(finding) == [("created", line_of(text, "# compiled here"))]
    assert finding.details["compiled_calls"] == 1
    assert "eager behaviour" in finding.message


def test_a_compiled_function_is_named_too(tmp_path: Path) -> None:
    found, text = notes(
        tmp_path,
        """
import torch
net = torch.nn.Linear(4, 2)

def step(x):
    return net(x).sum()

fast = torch.compile(step, backend="aot_eager")  # compiled here
fast(torch.randn(3, 4)).backward()
""",
    )
    (finding,) = [f for f in found if f.code == "GP503"]
    assert "step (backend 'aot_eager')" in finding.message
    assert roles(finding) == [("created", line_of(text, "# compiled here"))]


def test_nothing_compiled_means_no_compile_finding(tmp_path: Path) -> None:
    found, _ = diagnose(
        tmp_path,
        """
import torch
model = torch.nn.Linear(4, 2)
model(torch.randn(3, 4)).sum().backward()
""",
    )
    assert [f.code for f in found if f.code.startswith("GP5")] == []


def test_recording_changes_no_gradient_and_leaves_nothing_patched() -> None:
    from torch.utils.hooks import RemovableHandle

    originals: dict[str, Any] = {
        "compile": torch.compile,
        "handle": RemovableHandle.__dict__["__init__"],
        "call": dynamo.eval_frame.OptimizedModule.__dict__["__call__"],
        "reset": dynamo.reset,
    }
    x = torch.randn(3, 4)
    net = Net()
    model = torch.compile(net, backend="aot_eager")
    model(x).sum().backward()
    plain = [p.grad.clone() for p in net.parameters()]  # type: ignore[union-attr]
    net.zero_grad()
    with pytest.raises(KeyError), gradprobe.record():
        model(x).sum().backward()
        recorded = [p.grad.clone() for p in net.parameters()]  # type: ignore[union-attr]
        raise KeyError("the user's code fails")
    assert all(torch.equal(a, b) for a, b in zip(plain, recorded, strict=True))
    assert torch.compile is originals["compile"]
    assert RemovableHandle.__dict__["__init__"] is originals["handle"]
    assert dynamo.eval_frame.OptimizedModule.__dict__["__call__"] is originals["call"]
    assert dynamo.reset is originals["reset"]


# -- the pieces, on hand-built records ---------------------------------------------------------


class _Frame:
    def __init__(self, filename: str, lineno: int, name: str) -> None:
        self.filename, self.lineno, self.name = filename, lineno, name


class _Reason:
    def __init__(self, reason: str, stack: list[_Frame]) -> None:
        self.reason, self.user_stack = reason, stack


def test_gradprobes_own_breaks_are_left_out_and_the_users_kept(tmp_path: Path) -> None:
    user = str(tmp_path / "train.py")
    ours = _Reason(
        "Skip inlining `torch.compiler.disable()`d function\n  Explanation: Skip inlining "
        "function <function RecorderMode.__torch_function__ at 0x7f00> since it was wrapped",
        [_Frame(user, 3, "forward")],
    )
    theirs = _Reason(
        "Skip calling `torch.compiler.disable()`d function\n  Explanation: Skip calling "
        "function `<function log_batch at 0x7f01>` since it was wrapped\n  Hint: Remove "
        "the `torch.compiler.disable` call",
        [_Frame("/x/torch/nn/modules/module.py", 1, "_call_impl"), _Frame(user, 7, "forward")],
    )
    found = compiled.graph_break_findings([ours, theirs, theirs])
    (finding,) = found
    assert (finding.cause.file, finding.cause.line) == (user, 7)  # type: ignore[union-attr]
    assert finding.details["times"] == 2
    assert "Remove the `torch.compiler.disable` call" in (finding.hint or "")
