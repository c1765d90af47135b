"""gradprobe.record / diagnose: each finding kind names the exact line to change.

Every scenario is a small script written to a temporary file and run as ``__main__`` by
``diagnose_script``, the way ``gradprobe diagnose`` runs a user's script. Expected lines are
found by searching the script's text, so the scripts read like user code.
"""

from __future__ import annotations

import gc
import json
import subprocess
import sys
import textwrap
import weakref
from pathlib import Path

import pytest
import torch

from gradprobe._record import RecordingError, record
from gradprobe.diagnose import diagnose_script
from gradprobe.findings import Finding

DOCS = Path(__file__).resolve().parent.parent / "docs"


def run(tmp_path: Path, source: str) -> tuple[list[Finding], str, int]:
    script = tmp_path / "user_script.py"
    text = textwrap.dedent(source).lstrip("\n")
    script.write_text(text)
    result = diagnose_script(script)
    return list(result.findings), text, result.exit_code


def line_of(text: str, needle: str) -> int:
    hits = [n for n, line in enumerate(text.splitlines(), start=1) if needle in line]
    assert len(hits) == 1, f"{needle!r} found on lines {hits}"
    return hits[0]


def causes(findings: list[Finding], code: str) -> list[int]:
    found = [f for f in findings if f.code == code]
    assert found, f"no {code} in {[f.code for f in findings]}"
    return [loc.line for f in found for loc in f.locations if loc.role == "cause"]


def roles(finding: Finding) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for loc in finding.locations:
        out.setdefault(loc.role, []).append(loc.line)
    return out


# -- one scenario per finding kind ---------------------------------------------------------------


def test_inplace_write_on_saved_tensor_names_the_write(tmp_path: Path) -> None:
    findings, text, status = run(
        tmp_path,
        """
        import torch
        x = torch.randn(4, requires_grad=True)
        h = x * 3
        y = h.sigmoid()
        y.mul_(2)
        y.sum().backward()
        """,
    )
    assert status == 1
    (finding,) = [f for f in findings if f.code == "GP101"]
    assert finding.node == "SigmoidBackward0"
    assert roles(finding)["cause"] == [line_of(text, "y.mul_(2)")]
    assert roles(finding)["saved"] == [line_of(text, "h.sigmoid()")]
    assert roles(finding)["error"] == [line_of(text, "backward()")]


def test_inplace_module_write_names_the_call_and_where_the_module_was_built(
    tmp_path: Path,
) -> None:
    findings, text, status = run(
        tmp_path,
        """
        import torch
        from torch import nn

        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.skip = nn.Linear(4, 4)
                self.act = nn.ReLU(inplace=True)

            def forward(self, x):
                s = self.skip(x)
                return self.act(x) + s

        stem = nn.Linear(4, 4)
        Block()(stem(torch.randn(2, 4))).sum().backward()
        """,
    )
    assert status == 1
    (finding,) = [f for f in findings if f.code == "GP101"]
    assert roles(finding)["cause"] == [
        line_of(text, "return self.act(x)"),
        line_of(text, "nn.ReLU(inplace=True)"),
    ]
    assert roles(finding)["saved"] == [line_of(text, "s = self.skip(x)")]
    assert "built with inplace=True" in finding.message


def test_optimizer_step_between_forward_and_backward(tmp_path: Path) -> None:
    findings, text, _ = run(
        tmp_path,
        """
        import torch
        layer = torch.nn.Linear(3, 2)
        opt = torch.optim.SGD(layer.parameters(), lr=0.1)
        out = layer(torch.randn(5, 3, requires_grad=True)).sum()
        out.backward(retain_graph=True)
        opt.step()
        out.backward()
        """,
    )
    assert causes(findings, "GP109") == [line_of(text, "opt.step()")]


def test_leaf_modified_in_place(tmp_path: Path) -> None:
    findings, text, status = run(
        tmp_path,
        """
        import torch
        w = torch.zeros(3, requires_grad=True)
        w.add_(1.0)
        """,
    )
    assert status == 1
    assert causes(findings, "GP102") == [line_of(text, "w.add_")]


def test_backward_through_graph_freed_by_earlier_iteration(tmp_path: Path) -> None:
    findings, text, _ = run(
        tmp_path,
        """
        import torch
        w = torch.randn(3, 1, requires_grad=True)
        shared = torch.randn(8, 3).mm(w)
        for i in range(2):
            part = shared[i * 4:(i + 1) * 4]
            part.pow(2).sum().backward()
        """,
    )
    (finding,) = [f for f in findings if f.code == "GP103"]
    assert roles(finding)["cause"] == [line_of(text, "shared = ")]
    assert "computed once, outside the loop" in finding.message


def test_backward_twice_blames_the_first_backward(tmp_path: Path) -> None:
    findings, text, _ = run(
        tmp_path,
        """
        import torch
        x = torch.randn(3, requires_grad=True)
        loss = x.exp().sum()
        loss.backward()  # first
        loss.backward()  # second
        """,
    )
    assert causes(findings, "GP103") == [line_of(text, "# first")]


def test_backward_on_detached_loss_names_the_cut(tmp_path: Path) -> None:
    findings, text, _ = run(
        tmp_path,
        """
        import torch
        model = torch.nn.Linear(3, 1)
        features = model(torch.randn(4, 3)).detach()
        loss = features.pow(2).mean()
        loss.backward()
        """,
    )
    assert causes(findings, "GP104") == [line_of(text, ".detach()")]


def test_forward_under_no_grad_names_the_op_and_the_with_line(tmp_path: Path) -> None:
    findings, text, _ = run(
        tmp_path,
        """
        import torch
        model = torch.nn.Linear(4, 1)
        with torch.no_grad():
            out = model(torch.randn(8, 4))
        loss = out.pow(2).mean()
        loss.backward()
        """,
    )
    (finding,) = [f for f in findings if f.code == "GP104"]
    assert roles(finding)["cause"] == [line_of(text, "no_grad")]
    assert roles(finding)["created"] == [line_of(text, "out = model")]


def test_backward_on_item_names_the_item(tmp_path: Path) -> None:
    findings, text, _ = run(
        tmp_path,
        """
        import torch
        model = torch.nn.Linear(4, 1)
        loss = model(torch.randn(8, 4)).pow(2).mean().item()
        loss.backward()
        """,
    )
    assert causes(findings, "GP104") == [line_of(text, ".item()")]


def test_numpy_round_trip_names_the_detach(tmp_path: Path) -> None:
    findings, text, _ = run(
        tmp_path,
        """
        import numpy as np
        import torch
        model = torch.nn.Linear(4, 1)
        pred = model(torch.randn(8, 4)).detach().numpy()
        score = torch.from_numpy(np.tanh(pred)).mean()
        score.backward()
        """,
    )
    assert causes(findings, "GP104") == [line_of(text, ".detach().numpy()")]


def test_non_scalar_backward_names_where_the_loss_got_its_shape(tmp_path: Path) -> None:
    findings, text, _ = run(
        tmp_path,
        """
        import torch
        pred = torch.randn(4, 3, requires_grad=True)
        per_sample = pred.pow(2).sum(dim=1)
        loss = per_sample.unsqueeze(1)
        loss.backward()
        """,
    )
    (finding,) = [f for f in findings if f.code == "GP105"]
    assert roles(finding)["cause"] == [line_of(text, "unsqueeze(1)")]
    assert finding.details["shape"] == [4, 1]


def test_grad_of_non_leaf_points_at_its_creation(tmp_path: Path) -> None:
    findings, text, _ = run(
        tmp_path,
        """
        import torch
        a = torch.ones(3, requires_grad=True).double()
        a.sum().backward()
        print(a.grad)
        """,
    )
    (finding,) = [f for f in findings if f.code == "GP106"]
    assert roles(finding) == {"cause": [line_of(text, ".double()")], "read": [4]}


def test_unused_module_parameters(tmp_path: Path) -> None:
    findings, text, _ = run(
        tmp_path,
        """
        import torch
        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.body = torch.nn.Linear(4, 4)
                self.head = torch.nn.Linear(4, 2)
                self.aux = torch.nn.Linear(4, 2)
            def forward(self, x):
                return self.head(self.body(x))
        net = Net()
        net(torch.randn(3, 4)).sum().backward()
        """,
    )
    (finding,) = [f for f in findings if f.code == "GP107"]
    assert finding.details["parameters"] == ["aux.weight", "aux.bias"]
    assert roles(finding)["cause"] == [line_of(text, "self.aux = ")]


def test_parameters_cut_off_by_detach(tmp_path: Path) -> None:
    findings, text, _ = run(
        tmp_path,
        """
        import torch
        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.features = torch.nn.Linear(4, 8)
                self.head = torch.nn.Linear(8, 1)
            def forward(self, x):
                h = self.features(x).relu()
                return self.head(h.detach())
        net = Net()
        net(torch.randn(3, 4)).sum().backward()
        """,
    )
    (finding,) = [f for f in findings if f.code == "GP107"]
    assert finding.details["parameters"] == ["features.weight", "features.bias"]
    assert roles(finding)["cause"] == [line_of(text, "h.detach()")]


def test_autograd_grad_without_create_graph_is_a_cut(tmp_path: Path) -> None:
    findings, text, _ = run(
        tmp_path,
        """
        import torch
        w = torch.randn(3, requires_grad=True)
        (g,) = torch.autograd.grad((w ** 2).sum(), w)
        g.pow(2).sum().backward()
        """,
    )
    assert causes(findings, "GP104") == [line_of(text, "autograd.grad")]


def test_parameter_rewrapped_in_forward(tmp_path: Path) -> None:
    findings, text, _ = run(
        tmp_path,
        """
        import torch
        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.gen = torch.nn.Linear(4, 4)
                self.w = torch.nn.Parameter(torch.randn(4))
            def forward(self, x):
                self.w = torch.nn.Parameter(self.gen(self.w))
                return (x * self.w).sum()
        net = Net()
        net(torch.randn(4)).backward()
        """,
    )
    (finding,) = [f for f in findings if f.code == "GP107"]
    assert finding.details["parameters"] == ["gen.weight", "gen.bias"]
    assert roles(finding)["cause"] == [line_of(text, "self.w = torch.nn.Parameter(self.gen")]


def test_write_through_data_is_silent_but_found(tmp_path: Path) -> None:
    findings, text, status = run(
        tmp_path,
        """
        import torch
        a = torch.randn(3, requires_grad=True)
        out = a.exp()
        alias = out.data
        alias.zero_()
        out.sum().backward()
        """,
    )
    assert status == 0
    (finding,) = [f for f in findings if f.code == "GP108"]
    assert roles(finding) == {"cause": [line_of(text, "alias.zero_()")], "saved": [3]}


def test_requires_grad_typo(tmp_path: Path) -> None:
    findings, text, _ = run(
        tmp_path,
        """
        import torch
        layer = torch.nn.Linear(2, 2)
        for p in layer.parameters():
            p.require_grad = False
        """,
    )
    (finding,) = [f for f in findings if f.code == "GP111"]
    assert finding.details["meant"] == "requires_grad"
    assert roles(finding)["cause"] == [line_of(text, "require_grad = False")]


def test_constant_loss_term_names_the_argmax(tmp_path: Path) -> None:
    findings, text, _ = run(
        tmp_path,
        """
        import torch
        logits = torch.randn(6, 3, requires_grad=True)
        target = torch.randint(0, 3, (6,))
        ce = torch.nn.functional.cross_entropy(logits, target)
        pred = logits.argmax(dim=1)
        wrong = (pred != target).float().mean()
        loss = ce + wrong
        loss.backward()
        """,
    )
    (finding,) = [f for f in findings if f.code == "GP113"]
    assert roles(finding) == {
        "cause": [line_of(text, "argmax")],
        "read": [line_of(text, "ce + wrong")],
    }


def test_grad_of_a_pruned_weight_names_the_pruning(tmp_path: Path) -> None:
    findings, text, _ = run(
        tmp_path,
        """
        import torch
        from torch import nn
        from torch.nn.utils import prune
        model = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 2))
        prune.l1_unstructured(model[0], name="weight", amount=0.5)
        model(torch.randn(4, 8)).pow(2).mean().backward()
        print(model[0].weight.grad)
        """,
    )
    (finding,) = [f for f in findings if f.code == "GP106"]
    assert roles(finding)["cause"] == [
        line_of(text, "print(model[0].weight.grad)"),
        line_of(text, "prune.l1_unstructured"),
    ]
    assert finding.parameter == "weight_orig" and "weight_orig.grad" in finding.message


def test_grad_of_a_parametrized_weight_names_the_parametrization(tmp_path: Path) -> None:
    findings, text, _ = run(
        tmp_path,
        """
        import torch
        from torch import nn
        from torch.nn.utils.parametrizations import weight_norm
        layer = weight_norm(nn.Linear(4, 3))
        layer(torch.randn(2, 4)).sum().backward()
        grad = layer.weight.grad
        """,
    )
    (finding,) = [f for f in findings if f.code == "GP106"]
    assert roles(finding)["cause"] == [
        line_of(text, "grad = layer.weight.grad"),
        line_of(text, "layer = weight_norm("),
    ]
    assert finding.parameter is not None
    assert finding.parameter.startswith("parametrizations.weight.original")


def test_first_nan_in_forward(tmp_path: Path) -> None:
    findings, text, _ = run(
        tmp_path,
        """
        import torch
        logits = torch.randn(2, 4, requires_grad=True)
        masked = logits.masked_fill(torch.tensor([False, False, False, True]), float("-inf"))
        logp = masked.log_softmax(dim=-1)
        probs = torch.zeros(2, 4)
        loss = -(probs * logp).sum()
        loss.backward()
        """,
    )
    (finding,) = [f for f in findings if f.code == "GP201"]
    assert roles(finding) == {
        "cause": [line_of(text, "-(probs * logp)")],
        "created": [line_of(text, "masked_fill")],
    }


def test_first_nan_in_forward_names_the_running_module(tmp_path: Path) -> None:
    findings, text, _ = run(
        tmp_path,
        """
        import torch
        from torch import nn

        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(4, 4)

            def forward(self, x):
                return torch.log(self.lin(x) - 100)

        model = nn.Sequential(nn.Linear(4, 4), nn.Sequential(nn.Tanh(), Block()))
        loss = model(torch.randn(3, 4)).sum()
        """,
    )
    (finding,) = [f for f in findings if f.code == "GP201"]
    assert finding.module == "1.1"
    assert "in module '1.1' (Block)" in finding.message
    assert causes(findings, "GP201") == [line_of(text, "torch.log")]


def test_first_nan_outside_modules_names_no_module(tmp_path: Path) -> None:
    findings, _, _ = run(
        tmp_path,
        """
        import torch
        x = torch.zeros(3, requires_grad=True)
        loss = (x / x).sum()
        """,
    )
    (finding,) = [f for f in findings if f.code == "GP201"]
    assert finding.module is None and "module" not in finding.message


def test_nan_gradient_from_unselected_where_branch(tmp_path: Path) -> None:
    findings, text, _ = run(
        tmp_path,
        """
        import torch
        a = torch.tensor([-1.0, 200.0], requires_grad=True)
        b = torch.where(a < 0, a.exp() - 1, a)
        b.sum().backward()
        """,
    )
    assert not [f for f in findings if f.code == "GP201"]
    assert causes(findings, "GP202") == [line_of(text, "torch.where")]


def test_running_total_keeps_graphs_alive(tmp_path: Path) -> None:
    findings, text, _ = run(
        tmp_path,
        """
        import torch
        model = torch.nn.Linear(4, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        total = 0
        for _ in range(4):
            opt.zero_grad()
            loss = model(torch.randn(3, 4)).pow(2).mean()
            total = total + loss
            loss.backward()
            opt.step()
        """,
    )
    (finding,) = [f for f in findings if f.code == "GP112"]
    assert roles(finding) == {"cause": [line_of(text, "total = total + loss")]}
    assert finding.details["iterations_chained"] == 4


@pytest.mark.parametrize("cell", ["GRU", "LSTM"])
def test_hidden_state_kept_by_retain_graph_blames_the_carry(tmp_path: Path, cell: str) -> None:
    # The classic "add retain_graph=True to silence the error" truncated-BPTT bug: the
    # step then breaks the old graph's saved weights. The step is not the line to change.
    findings, text, _ = run(
        tmp_path,
        f"""
        import torch
        from torch import nn
        rnn = nn.{cell}(8, 16, batch_first=True)
        head = nn.Linear(16, 1)
        opt = torch.optim.SGD([*rnn.parameters(), *head.parameters()], lr=0.01)
        state = None
        for step in range(4):
            out, state = rnn(torch.randn(4, 5, 8), state)
            loss = head(out[:, -1]).pow(2).mean()
            opt.zero_grad()
            loss.backward(retain_graph=True)
            opt.step()
        """,
    )
    (finding,) = [f for f in findings if f.code == "GP112"]
    assert roles(finding)["cause"] == [
        line_of(text, "out, state = rnn("),
        line_of(text, "retain_graph=True"),
    ]
    assert not [f for f in findings if f.code == "GP109"], "the step is a symptom here"


def test_feature_cached_outside_the_loop_with_retain_graph(tmp_path: Path) -> None:
    findings, text, _ = run(
        tmp_path,
        """
        import torch
        encoder = torch.nn.Sequential(torch.nn.Linear(6, 6), torch.nn.Tanh(), torch.nn.Linear(6, 6))
        head = torch.nn.Linear(6, 1)
        opt = torch.optim.Adam([*encoder.parameters(), *head.parameters()])
        features = encoder(torch.randn(8, 6)).tanh()
        for epoch in range(3):
            loss = head(features).pow(2).mean()
            opt.zero_grad()
            loss.backward(retain_graph=True)
            opt.step()
        """,
    )
    (finding,) = [f for f in findings if f.code == "GP112"]
    assert roles(finding)["cause"] == [
        line_of(text, "features = encoder"),
        line_of(text, "retain_graph=True"),
    ]


def test_second_loss_after_a_step_in_straight_line_code_blames_the_step(
    tmp_path: Path,
) -> None:
    findings, text, _ = run(
        tmp_path,
        """
        import torch
        model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        out = model(torch.randn(16, 4))
        out.pow(2).mean().backward(retain_graph=True)
        opt.step()
        out.abs().mean().backward()
        """,
    )
    # The step, and the loss built after it from the output of the forward before it.
    assert causes(findings, "GP109") == [line_of(text, "out.abs()"), line_of(text, "opt.step()")]
    assert not [f for f in findings if f.code == "GP112"]


def test_every_output_of_a_multi_output_op_is_recorded() -> None:
    # torch 2.13 has no node-creation hook: nodes are found from each call's outputs, and
    # a GRU's hidden state (made before its output) must be found too.
    gru = torch.nn.GRU(3, 4)
    with record() as rec:
        out, hidden = gru(torch.randn(2, 1, 3))
    for tensor in (out, hidden):
        node = tensor.grad_fn
        assert (node.name(), node._sequence_nr()) in rec._events.nodes


def test_zero_grad_inside_accumulation_window(tmp_path: Path) -> None:
    findings, text, _ = run(
        tmp_path,
        """
        import torch
        model = torch.nn.Linear(4, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for i in range(4):
            opt.zero_grad()
            model(torch.randn(3, 4)).pow(2).mean().backward()
            if i % 2 == 1:
                opt.step()
        """,
    )
    assert causes(findings, "GP110") == [line_of(text, "opt.zero_grad()")]


def test_grad_scaler_overflow_is_not_reported_as_nan(tmp_path: Path) -> None:
    findings, _, status = run(
        tmp_path,
        """
        import torch
        w = torch.nn.Parameter(torch.ones(3))
        opt = torch.optim.SGD([w], lr=0.1)
        scaler = torch.amp.GradScaler("cpu", init_scale=2.0**100)
        loss = (w * 1e30).sum()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        """,
    )
    assert status == 0
    assert [f.code for f in findings if f.code.startswith("GP2")] == []


def test_create_graph_and_torch_func_are_not_misread() -> None:
    with record() as rec:
        x = torch.randn(3, requires_grad=True)
        g = torch.func.grad(lambda t: (t.sin() ** 2).sum())(x)
        (gx,) = torch.autograd.grad((x**3).sum(), x, create_graph=True)
        gx.sum().backward()
    assert torch.allclose(g, 2 * x.sin() * x.cos())
    assert x.grad is not None and torch.allclose(x.grad, 6 * x.detach())
    assert rec.findings == []


def test_check_inside_a_recording_adds_the_lines() -> None:
    import gradprobe

    here = Path(__file__).read_text().splitlines()
    with record():
        a = torch.ones(4, requires_grad=True)
        b = a + 2
        loss = (b * b).mean()  # saved here
        b[0] = 1000.0  # overwritten here
        report = gradprobe.check(loss)
    (finding,) = report.findings
    lines = {loc.role: here[loc.line - 1] for loc in finding.locations}
    assert "# overwritten here" in lines["cause"]
    assert "# saved here" in lines["saved"]


def test_nan_gradient_from_sqrt_at_zero_names_the_sqrt(tmp_path: Path) -> None:
    findings, text, _ = run(
        tmp_path,
        """
        import torch
        x = torch.zeros(3, 2, requires_grad=True)
        dist = (x * 2).pow(2).sum(dim=1).sqrt()
        dist.mean().backward()
        """,
    )
    (finding,) = [f for f in findings if f.code == "GP202"]
    assert roles(finding) == {"cause": [line_of(text, ".sqrt()")]}
    assert "SqrtBackward0" in finding.message


def test_a_nan_parameter_gradient_is_named_after_the_parameter(tmp_path: Path) -> None:
    findings, text, _ = run(
        tmp_path,
        """
        import torch
        from torch import nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.enc = nn.Linear(4, 8)

            def forward(self, x):
                z = self.enc(x)
                return (z - z[[0, 0, 1, 2]]).pow(2).sum(-1).sqrt()

        net = Net()
        net(torch.randn(4, 4)).mean().backward()
        """,
    )
    (finding,) = [f for f in findings if f.code == "GP202"]
    assert finding.tensor == "enc.weight"
    assert "parameter 'enc.weight' (8, 4)" in finding.message
    assert roles(finding) == {"cause": [line_of(text, ".sqrt()")]}


def test_clean_script_has_no_findings(tmp_path: Path) -> None:
    findings, _, status = run(
        tmp_path,
        """
        import torch
        model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(3):
            opt.zero_grad()
            loss = model(torch.randn(5, 4)).pow(2).mean()
            loss.backward()
            opt.step()
            print(f"{loss.item():.3f}", (loss.detach() > 0).item())
        with torch.no_grad():
            model(torch.randn(2, 4))
        """,
    )
    assert status == 0
    assert findings == []


# -- the recorder itself -------------------------------------------------------------------------


def _registries() -> dict[str, object]:
    module = torch.nn.modules.module
    from torch.nn.utils import parametrize, prune
    from torch.optim import optimizer

    return {
        "setattr": torch.Tensor.__dict__.get("__setattr__"),
        "parameter_new": torch.nn.Parameter.__dict__["__new__"],
        "module_init": torch.nn.Module.__dict__["__init__"],
        "module_train": torch.nn.Module.__dict__["train"],
        "function_apply": torch.autograd.Function.__dict__["apply"],
        "register_hook": torch.Tensor.__dict__["register_hook"],
        "from_numpy": torch.from_numpy,
        "optimizer_init": torch.optim.Optimizer.__dict__["__init__"],
        "load_state_dict": torch.nn.Module.__dict__["load_state_dict"],
        "clip": torch.nn.utils.clip_grad_norm_,
        "no_grad": torch.no_grad.__dict__["__enter__"],
        "grad_scaler": torch.amp.GradScaler.__dict__["scale"],
        "grad_unscale": torch.amp.GradScaler.__dict__["unscale_"],
        "grad_update": torch.amp.GradScaler.__dict__["update"],
        "log_prob": {
            name: cls.__dict__["log_prob"]
            for name, cls in vars(torch.distributions).items()
            if isinstance(cls, type) and "log_prob" in cls.__dict__
        },
        "prune_apply": prune.BasePruningMethod.__dict__["apply"],
        "parametrize": parametrize.register_parametrization,
        "forward_pre": dict(module._global_forward_pre_hooks),
        "forward": dict(module._global_forward_hooks),
        "forward_always": dict(module._global_forward_hooks_always_called),
        "backward": dict(module._global_backward_hooks),
        "step_pre": dict(optimizer._global_optimizer_pre_hooks),
        "step_post": dict(optimizer._global_optimizer_post_hooks),
        "modes": torch._C._len_torch_function_stack(),
    }


def test_nothing_stays_registered_also_on_error() -> None:
    before = _registries()
    with record():
        torch.ones(2, requires_grad=True).sum().backward()
    assert _registries() == before
    with pytest.raises(ValueError, match="boom"), record():
        torch.nn.Linear(2, 2)(torch.ones(1, 2))
        raise ValueError("boom")
    assert _registries() == before


def test_gradprobe_own_torch_calls_are_not_recorded() -> None:
    import gradprobe

    with record() as rec:
        x = torch.tensor([1.0, float("nan")], requires_grad=True)
        gradprobe.trace((x * 2).sum())  # gradprobe's own work inside the block
    made = [name for name, _ in rec._events.nodes if "AccumulateGrad" not in name]
    assert made == ["MulBackward0", "SumBackward0"]  # (2.14's node hook also reports x's)


def test_errors_pass_through_unchanged() -> None:
    x = torch.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="only for scalar outputs") as info, record() as rec:
        (x * 2).backward()
    assert type(info.value) is RuntimeError
    assert [f.code for f in rec.findings] == ["GP105"]


def test_recordings_nest_and_cannot_be_reentered() -> None:
    with record() as outer:
        x = torch.ones(3, requires_grad=True)
        with record() as inner:
            (x * 2).double().grad  # noqa: B018
        x.exp().double().grad  # noqa: B018
    assert [f.code for f in inner.findings] == ["GP106"]
    assert [f.code for f in outer.findings] == ["GP106", "GP106"]
    with pytest.raises(RecordingError, match="has ended"), outer:
        pass
    active = record()
    with active, pytest.raises(RecordingError, match="re-entered"), active:
        pass


def test_an_outer_recording_sees_what_an_inner_one_hands_on() -> None:
    # An inner recording calls torch on from several of the recorder's files (its hot path,
    # requires_grad_(), .grad reads): the outer one must find the user's line above all of
    # them, not take the calls for gradprobe's own work and skip them. (Both walk the graph
    # from each call's results: on torch 2.14 the outer one would take the node-creation
    # hook and see nodes the walk leaves out, such as AccumulateGrad.)
    with record(node_hook=False) as outer, record(node_hook=False) as inner:
        x = torch.ones(3, requires_grad=True)
        w = torch.ones(3)
        y = (x * w).exp()
        w.requires_grad_()  # after the graph was built: w.grad stays None (GP136)
        y.sum().backward()
        w.grad  # noqa: B018
        y.double().grad  # noqa: B018  (a non-leaf's .grad: GP106)
    here = sys._getframe().f_code.co_name
    assert [b.line and b.line[2] for b in inner._events.backwards] == [here]
    assert [b.line for b in outer._events.backwards] == [b.line for b in inner._events.backwards]
    assert list(outer._events.nodes) == list(inner._events.nodes)
    codes = sorted(f.code for f in inner.findings)
    assert {"GP106", "GP136"} <= set(codes)
    assert sorted(f.code for f in outer.findings) == codes


def test_recording_keeps_no_tensor_alive() -> None:
    with record():
        x = torch.randn(4, requires_grad=True)
        y = x.exp().detach()
        (x.exp() * y).sum().backward()
        refs = [weakref.ref(x), weakref.ref(y)]
    del x, y
    gc.collect()
    assert [ref() for ref in refs] == [None, None]


def _train_step(model: torch.nn.Module, inputs: torch.Tensor) -> list[torch.Tensor]:
    model.zero_grad()
    out = model(inputs)
    (out[0] if isinstance(out, tuple) else out).float().pow(2).mean().backward()
    return [p.grad.clone() for p in model.parameters() if p.grad is not None]


@pytest.mark.parametrize("name", ["resnet", "transformer"])
def test_recording_does_not_change_gradients(name: str) -> None:
    from benchmarks.models import resnet_deep, transformer_encoder

    torch.manual_seed(0)
    if name == "resnet":
        model: torch.nn.Module = resnet_deep(blocks=4, width=8)
        inputs = torch.randn(2, 3, 32, 32)
    else:
        model = transformer_encoder(2, d_model=32, nhead=4)
        inputs = torch.randn(2, 8, 32)
    plain = _train_step(model, inputs)
    with record() as rec:
        recorded = _train_step(model, inputs)
    assert len(rec._events.nodes) > 20
    assert len(plain) == len(recorded)
    for a, b in zip(plain, recorded, strict=True):
        assert torch.equal(a, b)


def test_records_lines_of_nodes_and_versions_at_save_time() -> None:
    with record() as rec:
        a = torch.ones(3, requires_grad=True)
        b = a * 2  # made here
        b.add_(1)
        c = b.sigmoid()
    here = Path(__file__).resolve()
    nodes = {key[0]: r for key, r in rec._events.nodes.items()}
    assert nodes["MulBackward0"].line is not None
    assert Path(nodes["MulBackward0"].line[0]).resolve() == here
    source = here.read_text().splitlines()
    assert "# made here" in source[nodes["MulBackward0"].line[1] - 1]
    assert nodes["SigmoidBackward0"].saves["result"][0] == c._version == 0
    (write,) = rec._events.writes
    assert (write.op, write.version_before, write.version_after) == ("add_", 0, 1)


# -- diagnose: CLI and JSON ----------------------------------------------------------------------


def test_diagnose_cli_json_matches_schema_and_exit_status(tmp_path: Path) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    script = tmp_path / "fails.py"
    script.write_text(
        "import sys, torch\n"
        "x = torch.ones(2, requires_grad=True)\n"
        "print('args', sys.argv[1:])\n"
        "(x * 2).backward()\n"
    )
    out = tmp_path / "report.json"
    result = subprocess.run(
        [sys.executable, "-m", "gradprobe", "diagnose", "--json", str(out), str(script), "-v"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert result.returncode == 1
    assert "args ['-v']" in result.stdout
    assert "GP105" in result.stderr and "Traceback" in result.stderr
    report = json.loads(out.read_text())
    jsonschema.validate(report, json.loads((DOCS / "diagnose-schema.json").read_text()))
    assert report["script"] == str(script.resolve())
    assert report["error"]["type"] == "RuntimeError"
    assert [
        (f["code"], f["locations"][0]["role"], f["locations"][0]["line"])
        for f in report["findings"]
    ] == [("GP105", "cause", 4)]


def test_diagnose_passes_exit_code_and_rejects_missing_script(tmp_path: Path) -> None:
    script = tmp_path / "exits.py"
    script.write_text("import sys\nsys.exit(3)\n")
    done = subprocess.run(
        [sys.executable, "-m", "gradprobe", "diagnose", str(script)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 3
    missing = subprocess.run(
        [sys.executable, "-m", "gradprobe", "diagnose", str(tmp_path / "nope.py")],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert missing.returncode == 2
    assert "is not a file" in missing.stderr


# -- deep graphs ---------------------------------------------------------------------------------

_DEEP = """
import torch, gradprobe
x = torch.ones(1, requires_grad=True)
with gradprobe.record() as rec:
    y = x
    for _ in range(100_000):
        y = y * 1.0
print(sum(1 for name, _ in rec._events.nodes if name == "MulBackward0"))
del y
import gradprobe._deepfree as d
print("drained", d.drain(30))
"""


@pytest.mark.slow
@pytest.mark.parametrize("node_hook", [True, False], ids=["node-hook", "walk"])
def test_recording_a_100k_node_chain_does_not_crash(tmp_path: Path, node_hook: bool) -> None:
    """Both ways of learning about nodes (torch 2.14's node_creation_hook, and the walk that
    2.13 needs) touch every node; band holds keep freeing the chain shallow."""
    script = tmp_path / "deep.py"
    script.write_text(_DEEP.replace("record()", f"record(node_hook={node_hook})"))
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, check=False, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.split()
    assert int(lines[0]) == 100_000
    assert "drained True" in done.stdout


# -- the shared real-bug cases -------------------------------------------------------------------

SHARED = Path(__file__).resolve().parent.parent.parent / "shared"


@pytest.mark.slow
@pytest.mark.parametrize("form", ["as written", "--main"])
@pytest.mark.parametrize("folder", ["cases", "cases-2"])
def test_shared_cases_are_diagnosed(folder: str, form: str) -> None:
    # Every real-bug case of both public folders, as written and with the script's body
    # moved into def main() (the model and optimizer then locals of a function).
    cases = SHARED / folder
    scorer = SHARED / "tools" / "cases.py"
    if not cases.is_dir() or not scorer.is_file():
        pytest.skip("../shared is not beside this checkout")
    numbers = sorted(p.name[:2] for p in cases.glob("[0-9][0-9]_*.py"))
    options = ["--main"] if form == "--main" else []
    done = subprocess.run(
        [sys.executable, str(scorer), "score", *options, str(cases), *numbers],
        capture_output=True,
        text=True,
        check=False,
        timeout=900,
    )
    last = done.stdout.strip().splitlines()[-1]
    assert last == f"diagnosed {len(numbers)}/{len(numbers)} cases; false findings 0", done.stdout


def test_embedding_with_padding_idx_records_cleanly(tmp_path: Path) -> None:
    # Embedding zeroes its padding row through a view made under no_grad; reading that
    # view's grad_fn raises, and the recorder used to let the error escape into the script.
    findings, _, status = run(
        tmp_path,
        """
        import torch
        from torch import nn

        emb = nn.Embedding(10, 4, padding_idx=0)
        loss = emb(torch.tensor([[0, 1, 2]])).sum()
        loss.backward()
        assert emb.weight.grad is not None and emb.weight.grad[0].abs().sum() == 0
        """,
    )
    assert status == 0
    assert [f.code for f in findings] == []


def test_reading_a_stale_saved_tensor_does_not_hang(tmp_path: Path) -> None:
    # Unpacking a saved view that an optimizer step overwrote: torch sets the private
    # `_backward_hooks` from C++ while it holds the node's lock, and the recorder used to
    # read the tensor's grad_fn there and wait on that lock forever.
    script = tmp_path / "stale_read.py"
    script.write_text(
        textwrap.dedent(
            """
            import torch
            from torch import nn

            lin = nn.Linear(4, 4)
            opt = torch.optim.SGD(lin.parameters(), lr=0.1)
            out = lin(torch.randn(2, 4, requires_grad=True))
            out.pow(2).sum().backward(retain_graph=True)
            opt.step()
            try:
                out.grad_fn._saved_mat2
            except RuntimeError as error:
                print("refused:", "modified by an inplace operation" in str(error))
            """
        )
    )
    done = subprocess.run(
        [sys.executable, "-m", "gradprobe", "diagnose", str(script)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "refused: True" in done.stdout


def test_value_computed_once_before_the_loop_blames_where_it_is_computed(tmp_path: Path) -> None:
    findings, text, status = run(
        tmp_path,
        """
        import torch
        from torch import nn

        encoder, head = nn.Linear(8, 8), nn.Linear(8, 2)
        features = encoder(torch.randn(4, 8)).relu()
        for step in range(3):
            loss = head(features).pow(2).mean()
            loss.backward()
        """,
    )
    assert status == 1
    (finding,) = [f for f in findings if f.code == "GP103"]
    assert roles(finding)["cause"] == [line_of(text, "features = encoder")]
    assert "computed once, outside the loop" in finding.message


def test_two_losses_from_one_forward_blame_the_first_backward(tmp_path: Path) -> None:
    findings, text, status = run(
        tmp_path,
        """
        import torch
        from torch import nn

        model = nn.Sequential(nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 3))
        out = model(torch.randn(4, 8))
        ce = nn.functional.cross_entropy(out, torch.tensor([0, 1, 2, 0]))
        reg = out.pow(2).mean()
        ce.backward()
        reg.backward()
        """,
    )
    assert status == 1
    (finding,) = [f for f in findings if f.code == "GP103"]
    assert roles(finding)["cause"] == [line_of(text, "ce.backward()")]
    assert roles(finding)["created"] == [line_of(text, "out = model(")]
    assert "retain_graph=True to the first backward()" in finding.message


def test_state_carried_through_a_module_blames_the_loop_line_that_passes_it(
    tmp_path: Path,
) -> None:
    findings, text, status = run(
        tmp_path,
        """
        import torch
        from torch import nn

        class Cell(nn.Module):
            def __init__(self):
                super().__init__()
                self.i2h, self.h2h, self.out = nn.Linear(4, 8), nn.Linear(8, 8), nn.Linear(8, 1)

            def forward(self, x, h):
                h = torch.tanh(self.i2h(x) + self.h2h(h))
                return self.out(h), h

        model = Cell()
        h = torch.zeros(2, 8)
        for step in range(3):
            y, h = model(torch.randn(2, 4), h)
            loss = y.pow(2).mean()
            loss.backward()
        """,
    )
    assert status == 1
    (finding,) = [f for f in findings if f.code == "GP103"]
    assert roles(finding)["cause"] == [line_of(text, "y, h = model(")]
    assert roles(finding)["created"] == [line_of(text, "h = torch.tanh(")]
    assert "state from the previous iteration" in finding.message


def test_state_carried_at_top_level_blames_the_line_that_reuses_it(tmp_path: Path) -> None:
    findings, text, status = run(
        tmp_path,
        """
        import torch

        w = torch.randn(8, 8, requires_grad=True)
        h = torch.zeros(1, 8)
        for step in range(3):
            h = torch.tanh(torch.randn(1, 8) + h @ w)
            h.pow(2).sum().backward()
        """,
    )
    assert status == 1
    (finding,) = [f for f in findings if f.code == "GP103"]
    assert roles(finding)["cause"] == [line_of(text, "h = torch.tanh(")]
    assert "state from the previous iteration" in finding.message


def test_loss_built_after_the_step_from_old_outputs_names_that_line(tmp_path: Path) -> None:
    findings, text, status = run(
        tmp_path,
        """
        import torch
        from torch import nn

        G, D = nn.Linear(4, 8), nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
        opt_d = torch.optim.Adam(D.parameters())
        bce = nn.BCEWithLogitsLoss()
        d_out = D(G(torch.randn(8, 4)))
        loss_d = bce(d_out, torch.zeros(8, 1))
        loss_d.backward(retain_graph=True)
        opt_d.step()
        loss_g = bce(d_out, torch.ones(8, 1))
        loss_g.backward()
        """,
    )
    assert status == 1
    assert [f.code for f in findings] == ["GP109"]  # not also GP101 from the error text
    assert roles(findings[0])["cause"] == [
        line_of(text, "loss_g = "),
        line_of(text, "opt_d.step()"),
    ]
    assert "built after that step" in findings[0].message


def test_outputs_piled_up_with_their_graphs_are_named_at_the_end(tmp_path: Path) -> None:
    findings, text, status = run(
        tmp_path,
        """
        import torch
        from torch import nn

        model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 4))
        val_preds, kept, losses = [], [], []
        for epoch in range(4):
            loss = model(torch.randn(16, 8)).pow(2).mean()
            loss.backward()
            losses.append(loss)  # backpropagated: its activations are already freed
            val_preds.append(model(torch.randn(16, 8)))
            kept.append(model(torch.randn(16, 8)).detach())
        """,
    )
    assert status == 0
    (finding,) = [f for f in findings if f.code == "GP112"]
    assert roles(finding)["cause"] == [line_of(text, "val_preds.append(")]
    assert finding.details["variable"] == "val_preds"
    assert finding.details["tensors"] == 4
    assert "torch.no_grad()" in finding.message


def test_features_from_inference_mode_blame_the_block(tmp_path: Path) -> None:
    findings, text, status = run(
        tmp_path,
        """
        import torch
        from torch import nn

        backbone, probe = nn.Linear(10, 32), nn.Linear(32, 3)
        with torch.inference_mode():
            feats = backbone(torch.randn(16, 10))
        loss = probe(feats).sum()
        """,
    )
    assert status == 1
    (finding,) = [f for f in findings if f.code == "GP114"]
    assert roles(finding) == {
        "cause": [line_of(text, "inference_mode()")],
        "created": [line_of(text, "feats = backbone")],
        "error": [line_of(text, "loss = probe")],
    }


def test_hook_returning_a_wrong_shape_names_its_return(tmp_path: Path) -> None:
    findings, text, status = run(
        tmp_path,
        """
        import torch

        kept = {}

        def pool(grad):
            kept["w"] = grad.mean(dim=1, keepdim=True)
            return kept["w"]

        x = torch.randn(2, 4, requires_grad=True)
        act = x * 2
        act.register_hook(pool)
        act.sum().backward()
        """,
    )
    assert status == 1
    (finding,) = [f for f in findings if f.code == "GP307"]
    assert roles(finding)["cause"] == [line_of(text, 'return kept["w"]')]
    assert roles(finding)["registered"] == [line_of(text, "register_hook(pool)")]
    assert finding.details == {"hook": "pool", "changed": "size"}


def test_diagnose_prints_the_script_traceback_without_its_own_frames(tmp_path: Path) -> None:
    script = tmp_path / "fails.py"
    script.write_text("def load():\n    raise ValueError('no such file')\n\nload()\n")
    done = subprocess.run(
        [sys.executable, "-m", "gradprobe", "diagnose", str(script)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 1
    assert 'fails.py", line 4, in <module>' in done.stderr
    assert 'fails.py", line 2, in load' in done.stderr
    assert "ValueError: no such file" in done.stderr
    assert "diagnose.py" not in done.stderr and "runpy" not in done.stderr
    # Not a green tick: the script failed, and nothing autograd explains why.
    assert "found nothing wrong" not in done.stderr
    assert "gradprobe found no autograd problem behind it" in " ".join(done.stderr.split())


def test_term_computed_in_numpy_blames_the_round_trip(tmp_path: Path) -> None:
    findings, text, status = run(
        tmp_path,
        """
        import numpy as np
        import torch

        w = torch.randn(5, requires_grad=True)
        out = w * 2
        d = np.diff(out.detach().numpy())
        penalty = torch.from_numpy(d).pow(2).sum()
        loss = out.pow(2).mean() + 10.0 * penalty
        loss.backward()
        """,
    )
    assert status == 0
    (finding,) = [f for f in findings if f.code == "GP113"]
    assert roles(finding)["cause"] == [line_of(text, "np.diff(")]
    assert roles(finding)["read"] == [line_of(text, "loss = ")]


def test_numpy_data_far_from_a_logged_value_is_not_blamed(tmp_path: Path) -> None:
    findings, _, status = run(
        tmp_path,
        """
        import numpy as np
        import torch

        w = torch.randn(5, requires_grad=True)
        history = []
        for step in range(3):
            out = w * 2
            history.append(out.detach().numpy().mean())

            batch = np.ones(5, dtype=np.float32) * step
            noise = torch.from_numpy(batch)
            loss = (out + noise).pow(2).sum()
            loss.backward()
        """,
    )
    assert status == 0
    assert [f.code for f in findings] == []


def test_transforms_lazy_modules_compile_and_tracing_run_unchanged(tmp_path: Path) -> None:
    # Each of these failed under the recorder: vmap and jacfwd refuse the NaN check's
    # .item(), a lazy module's parameters cannot be counted before they materialise,
    # dynamo traced into the recorder, and jit.trace recorded the check's own ops.
    findings, _, status = run(
        tmp_path,
        """
        import warnings

        import torch
        from torch import nn
        from torch.func import jacfwd, vmap

        warnings.filterwarnings("error", category=torch.jit.TracerWarning)
        x = torch.randn(3, 2)
        assert torch.equal(vmap(torch.sin)(x), torch.sin(x))
        assert jacfwd(torch.sin)(torch.randn(3)).shape == (3, 3)
        assert nn.LazyBatchNorm1d()(torch.randn(4, 3)).shape == (4, 3)
        model = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
        compiled = torch.compile(model, backend="eager")
        with warnings.catch_warnings(record=True) as caught:  # the recorder's global hooks
            assert torch.equal(compiled(torch.ones(2, 4)), model(torch.ones(2, 4)))
        assert not [w for w in caught if "global hooks" in str(w.message)]
        traced = torch.jit.trace(nn.Linear(3, 1), torch.randn(2, 3))
        assert len(list(traced.graph.nodes())) < 10
        """,
    )
    assert status == 0
    # nothing wrong (the note GP503, that the compiled model ran op by op, is no finding)
    assert findings == []


def test_correct_idioms_that_look_like_bugs_give_no_findings(tmp_path: Path) -> None:
    # Each of these once gave a finding: higher-order gradients (GP112), autograd.grad
    # before a normal step (GP110), gradcheck's perturbations (GP108), deliberate detaches
    # and shape-only factories mixed into a loss (GP113), NaN labels masked out (GP201).
    findings, _, status = run(
        tmp_path,
        """
        import torch
        from torch import nn
        from torch.autograd.functional import hessian
        from torch.distributions import Normal, kl_divergence

        x = torch.randn(3)
        assert torch.allclose(hessian(lambda a: (a**3).sum(), x), hessian(lambda a: (a**3).sum(), x))
        a = torch.randn(3, 3, dtype=torch.double, requires_grad=True)
        assert torch.autograd.gradcheck(lambda a: a @ a.T, (a,))

        D = nn.Linear(4, 1)
        opt = torch.optim.SGD(D.parameters(), lr=0.1)

        def penalty(real):
            inter = real.clone().requires_grad_(True)
            out = D(inter)
            (g,) = torch.autograd.grad(out, inter, torch.ones_like(out), create_graph=True)
            return (g**2).mean()

        for it in range(3):
            real = torch.randn(8, 4)
            loss = D(real).mean() + penalty(real)
            opt.zero_grad()
            loss.backward()
            opt.step()

        import io

        buffer = io.BytesIO()  # unpickling sets requires_grad on fresh tensors: not a freeze
        torch.save(D, buffer)
        buffer.seek(0)
        loaded = torch.load(buffer, weights_only=False)
        loaded(torch.randn(2, 4)).sum().backward()

        w = torch.randn(5, requires_grad=True)
        for inner in range(2):  # MAML: differentiate through an inner step
            (g,) = torch.autograd.grad((w**2).sum(), w, create_graph=True)
            w = w - 0.1 * g
        w.sum().backward()

        mu = torch.randn(4, requires_grad=True)
        q = Normal(mu, torch.ones(4))
        prior = Normal(torch.zeros_like(mu), torch.ones_like(mu))
        z = mu + (torch.round(mu) - mu).detach()  # straight-through estimator
        with torch.no_grad():
            old_logp = Normal(mu, 1.0).log_prob(z)
        ratio = (Normal(mu, 1.0).log_prob(z) - old_logp).exp()
        loss = -Normal(mu, 1.0).log_prob(z).sum() + kl_divergence(q, prior).sum() - ratio.mean()
        loss = loss + (mu + 0.1 * torch.randn_like(mu)).pow(2).sum()
        loss.backward()

        pred = torch.randn(6, requires_grad=True)
        y = torch.tensor([1.0, float("nan"), 0.0, 2.0, float("nan"), 1.0])
        mask = ~y.isnan()
        loss = ((pred - y.nan_to_num()) ** 2 * mask).sum() / mask.sum()
        loss.backward()
        print(torch.nanmean((pred.detach() - y).abs()))
        """,
    )
    assert status == 0
    assert [f.code for f in findings] == []


def test_gradient_penalty_without_create_graph_is_a_constant_term(tmp_path: Path) -> None:
    findings, text, status = run(
        tmp_path,
        """
        import torch
        from torch import nn

        D = nn.Linear(2, 1)
        inter = torch.randn(16, 2).requires_grad_(True)
        d = D(inter)
        g = torch.autograd.grad(d, inter, torch.ones_like(d))[0]
        gp = ((g.norm(2, dim=1) - 1) ** 2).mean()
        loss = D(torch.randn(16, 2)).mean() + 10.0 * gp
        loss.backward()
        """,
    )
    assert status == 0
    (finding,) = [f for f in findings if f.code == "GP113"]
    assert roles(finding)["cause"] == [line_of(text, "torch.autograd.grad(")]


def test_backward_on_a_rebuilt_leaf_loss_names_the_rebuild_and_the_cut(tmp_path: Path) -> None:
    findings, text, status = run(
        tmp_path,
        """
        import torch
        from torch import nn

        model = nn.Linear(8, 3)
        x, y = torch.randn(32, 8), torch.randint(0, 3, (32,))
        pred = model(x).argmax(dim=1).float()
        loss = nn.functional.mse_loss(pred, y.float())
        loss = torch.tensor(loss.item(), requires_grad=True)
        loss.backward()
        print(loss.item())
        """,
    )
    assert status == 0
    (finding,) = [f for f in findings if f.code == "GP115"]
    assert roles(finding) == {
        "cause": [line_of(text, "torch.tensor(loss.item()")],
        "created": [line_of(text, "argmax")],
    }
    # A parameter or a leaf made on purpose and backpropagated is not this.
    findings, _, _ = run(tmp_path, "import torch\ntorch.nn.Parameter(torch.ones(1)).backward()\n")
    assert not [f for f in findings if f.code == "GP115"]


def test_layers_no_optimizer_updates_are_named(tmp_path: Path) -> None:
    findings, text, status = run(
        tmp_path,
        """
        import torch
        from torch import nn

        class MLP(nn.Module):
            def __init__(self):
                super().__init__()
                self.inp = nn.Linear(6, 6)
                self.hidden = [nn.Linear(6, 6)]
                self.out = nn.Linear(6, 1)

            def forward(self, x):
                return self.out(torch.relu(self.hidden[0](self.inp(x))))

        model = MLP()
        model.extra = nn.Linear(6, 6)  # built before the optimizer, left out on purpose
        chosen = [p for n, p in model.named_parameters() if not n.startswith("extra")]
        opt = torch.optim.SGD(chosen, lr=0.1)
        model.out = nn.Linear(6, 1)
        probe = nn.Linear(3, 1)  # made after the optimizer, but no part of the model
        for _ in range(2):
            opt.zero_grad()
            (model(torch.randn(4, 6)) + model.extra(torch.randn(4, 6)).sum()).pow(2).mean().backward()
            opt.step()
        probe(torch.randn(2, 3)).sum().backward()
        """,
    )
    assert status == 0
    found = {tuple(roles(f)["cause"]): f for f in findings if f.code == "GP116"}
    assert set(found) == {
        (line_of(text, "self.hidden = ["),),
        (line_of(text, "opt = torch.optim"),),
    }
    assert "not registered" in found[(line_of(text, "self.hidden = ["),)].message
    # the optimizer is the line to change; the layer made after it is where it was made
    late = found[(line_of(text, "opt = torch.optim"),)]
    assert roles(late)["created"] == [line_of(text, "model.out = nn.Linear")]


def test_freezing_state_dict_copies_and_prefixed_loads_are_named(tmp_path: Path) -> None:
    findings, text, status = run(
        tmp_path,
        """
        import torch
        from torch import nn

        model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 2))
        ckpt = {"module." + k: v for k, v in model.state_dict().items()}
        model.load_state_dict(ckpt, strict=False)
        model.load_state_dict(model.state_dict(), strict=False)  # loads everything: fine
        for name, tensor in model.state_dict().items():
            if name.startswith("0."):
                tensor.requires_grad = False
        model(torch.randn(3, 4)).sum().backward()
        """,
    )
    assert status == 0
    (load,) = [f for f in findings if f.code == "GP117"]
    assert roles(load)["cause"] == [line_of(text, "load_state_dict(ckpt")]
    assert load.details["prefix"] == "module."
    (freeze,) = [f for f in findings if f.code == "GP111"]
    assert roles(freeze)["cause"] == [line_of(text, "tensor.requires_grad = False")]
    assert freeze.details["parameters"] == ["0.weight", "0.bias"]


def test_targets_with_grad_early_clipping_and_rounded_losses_are_named(
    tmp_path: Path,
) -> None:
    findings, text, status = run(
        tmp_path,
        """
        import torch
        from torch import nn
        import torch.nn.functional as F

        q_net = nn.Linear(4, 2)
        opt = torch.optim.SGD(q_net.parameters(), lr=0.01)
        for step in range(2):
            s, s_next = torch.randn(8, 4), torch.randn(8, 4)
            target = 1.0 + 0.9 * q_net(s_next).max(1)[0]
            opt.zero_grad()
            nn.utils.clip_grad_norm_(q_net.parameters(), max_norm=1.0)
            F.mse_loss(q_net(s).max(1)[0], target).backward()
            opt.step()

        model = nn.Linear(5, 1)
        pred = torch.round(torch.sigmoid(model(torch.randn(16, 5))))
        F.l1_loss(pred, torch.ones(16, 1)).backward()
        """,
    )
    assert status == 0
    by_code = {f.code: roles(f)["cause"] for f in findings}
    assert by_code["GP118"] == [line_of(text, "target = 1.0")]
    assert by_code["GP119"] == [line_of(text, "clip_grad_norm_")]
    assert by_code["GP120"] == [line_of(text, "torch.round(")]


def test_zero_gradients_before_a_round_are_named_while_later_layers_learn(
    tmp_path: Path,
) -> None:
    source = """
        import torch
        from torch import nn

        model = nn.Sequential(nn.Linear(6, 16), nn.Linear(16, 1))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(2):
            hidden = torch.round(model[0](torch.randn(8, 6)))
            loss = model[1](hidden).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        """
    findings, text, status = run(tmp_path, source)
    assert status == 0
    (flat,) = [f for f in findings if f.code == "GP120"]
    assert roles(flat)["cause"] == [line_of(text, "torch.round(")]
    assert flat.details == {"parameters": ["Linear.weight", "Linear.bias"]}  # model[0]
    assert "The gradients of Linear.weight, Linear.bias are exactly zero" in flat.message
    # a straight-through estimator lets the first layer learn: nothing to report
    straight = source.replace(
        "torch.round(model[0](torch.randn(8, 6)))",
        "(lambda h: h + (h.round() - h).detach())(model[0](torch.randn(8, 6)))",
    )
    findings, _, _ = run(tmp_path, straight)
    assert [f for f in findings if f.code == "GP120"] == []


def test_detached_targets_and_clipping_after_backward_are_fine(tmp_path: Path) -> None:
    findings, _, status = run(
        tmp_path,
        """
        import torch
        from torch import nn
        import torch.nn.functional as F

        q_net = nn.Linear(4, 2)
        opt = torch.optim.SGD(q_net.parameters(), lr=0.01)
        for step in range(2):
            s, s_next = torch.randn(8, 4), torch.randn(8, 4)
            with torch.no_grad():
                target = 1.0 + 0.9 * q_net(s_next).max(1)[0]
            opt.zero_grad()
            F.mse_loss(q_net(s).max(1)[0], target).backward()
            nn.utils.clip_grad_norm_(q_net.parameters(), max_norm=1.0)
            opt.step()
        """,
    )
    assert status == 0
    assert [f.code for f in findings] == []


def test_custom_function_returning_none_for_a_weight_names_its_return(tmp_path: Path) -> None:
    findings, text, status = run(
        tmp_path,
        """
        import torch

        class Scaled(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, weight):
                ctx.save_for_backward(x, weight)
                return x @ weight.t()

            @staticmethod
            def backward(ctx, grad_out):
                x, weight = ctx.saved_tensors
                return grad_out @ weight, None

        weight = torch.nn.Parameter(torch.randn(3, 4))
        x = torch.randn(5, 4, requires_grad=True)
        Scaled.apply(x, weight).sum().backward()
        frozen = torch.randn(3, 4)  # no grad needed: None is right for it
        Scaled.apply(torch.randn(5, 4, requires_grad=True), frozen).sum().backward()
        """,
    )
    assert status == 0
    (finding,) = [f for f in findings if f.code == "GP122"]
    assert roles(finding)["cause"] == [line_of(text, "return grad_out @ weight, None")]
    assert finding.details == {"function": "Scaled", "inputs": [1]}


def test_per_sample_gradients_with_vmap_of_grad_record_cleanly(tmp_path: Path) -> None:
    # The backward inside vmap(grad(...)) runs the recorder's node hooks on batched
    # gradients, where looking at values is an error.
    findings, _, status = run(
        tmp_path,
        """
        import torch
        from torch import nn
        from torch.func import functional_call, grad, vmap

        model = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 1))
        params = {k: v.detach() for k, v in model.named_parameters()}

        def loss_fn(p, x, y):
            return ((functional_call(model, p, (x.unsqueeze(0),)) - y) ** 2).mean()

        x, y = torch.randn(10, 5), torch.randn(10, 1)
        per_sample = vmap(grad(loss_fn), in_dims=(None, 0, 0))(params, x, y)
        assert per_sample["0.weight"].shape == (10, 8, 5)
        """,
    )
    assert status == 0
    assert [f.code for f in findings] == []


def test_a_policy_gradient_weight_that_requires_grad_names_where_it_was_made(
    tmp_path: Path,
) -> None:
    findings, text, status = run(
        tmp_path,
        """
        import torch
        from torch import nn

        torch.manual_seed(0)
        policy = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 3))
        critic = nn.Linear(4, 1)
        opt = torch.optim.Adam([*policy.parameters(), *critic.parameters()])
        states, returns = torch.randn(6, 4), torch.randn(6)
        dist = torch.distributions.Categorical(logits=policy(states))
        actions = dist.sample()
        values = critic(states).squeeze(-1)
        advantage = returns - values
        loss = -(dist.log_prob(actions) * advantage).mean() + (returns - values).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        """,
    )
    assert status == 0
    (finding,) = [f for f in findings if f.code == "GP123"]
    assert roles(finding) == {
        "cause": [line_of(text, "advantage = returns")],
        "read": [line_of(text, "loss = -(")],
    }
    assert finding.tensor == "advantage"
    assert "reaches 2 parameters" in finding.message  # the critic's weight and bias
    assert "advantage.detach()" in finding.message


def test_hand_written_log_softmax_policy_terms_are_followed(tmp_path: Path) -> None:
    findings, text, _ = run(
        tmp_path,
        """
        import torch
        from torch import nn
        import torch.nn.functional as F

        class ActorCritic(nn.Module):
            def __init__(self):
                super().__init__()
                self.trunk = nn.Linear(4, 16)
                self.pi = nn.Linear(16, 3)
                self.v = nn.Linear(16, 1)

            def forward(self, x):
                h = torch.relu(self.trunk(x))
                return self.pi(h), self.v(h).squeeze(-1)

        net = ActorCritic()
        saved, baselines = [], []
        for t in range(5):
            logits, value = net(torch.randn(1, 4))
            log_probs = F.log_softmax(logits, dim=-1)
            action = torch.multinomial(log_probs.exp(), 1)
            saved.append(log_probs.gather(1, action).squeeze())
            baselines.append(value.squeeze())
        returns = torch.arange(5.0)
        weight = returns - torch.stack(baselines)
        entropy = -(log_probs.exp() * log_probs).sum()
        loss = -(torch.stack(saved) * weight).sum() - 0.01 * entropy
        loss.backward()
        """,
    )
    (finding,) = [f for f in findings if f.code == "GP123"]
    assert roles(finding)["cause"] == [line_of(text, "weight = returns")]
    assert "reaches 2 parameters" in finding.message  # v.weight, v.bias; the trunk is shared


@pytest.mark.parametrize(
    "weight",
    [
        "(returns - values).detach()",
        "returns - values.detach()",
        "returns",
    ],
)
def test_detached_advantages_and_entropy_bonuses_are_fine(tmp_path: Path, weight: str) -> None:
    findings, _, status = run(
        tmp_path,
        f"""
        import torch
        from torch import nn
        import torch.nn.functional as F

        policy = nn.Linear(4, 3)
        critic = nn.Linear(4, 1)
        states, returns = torch.randn(6, 4), torch.randn(6)
        dist = torch.distributions.Categorical(logits=policy(states))
        actions = dist.sample()
        values = critic(states).squeeze(-1)
        advantage = {weight}
        probs = F.softmax(policy(states), -1)
        entropy = -(probs * F.log_softmax(policy(states), -1)).sum(-1).mean()
        focal = ((1 - dist.log_prob(actions).exp()) * dist.log_prob(actions)).mean()
        loss = -(dist.log_prob(actions) * advantage).mean() - 0.01 * entropy + focal
        (loss + (returns - values).pow(2).mean()).backward()
        """,
    )
    assert status == 0
    assert "GP123" not in [f.code for f in findings]


def test_fresh_tensors_are_not_taken_for_cut_values_at_a_reused_address(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A freed cut result's memory can go to the next torch.randn: every storage is at one
    # address here, so the reuse happens every time. Only tensors made from a numpy array
    # may share memory with a cut's values.
    from gradprobe._recorder import graph, mode

    for module in (mode, graph):  # the recorder's modules that read storage addresses
        monkeypatch.setattr(module, "_storage", lambda tensor: 1)
    findings, text, status = run(
        tmp_path,
        """
        import torch
        from torch import nn

        net = nn.Linear(4, 3)
        logits = net(torch.randn(16, 4))
        picked = torch.multinomial(logits.softmax(-1), 1)  # a cut: no gradient
        noise = torch.randn(16, 1)
        (logits.sum(-1, keepdim=True) - noise).pow(2).mean().backward()
        logits = net(torch.randn(16, 4))
        back = torch.as_tensor(logits.argmax(-1, keepdim=True).numpy()).float()
        (logits.sum(-1, keepdim=True) + back).mean().backward()
        """,
    )
    assert status == 0
    assert causes(findings, "GP113") == [line_of(text, "logits.argmax")]


def test_a_weight_used_only_through_data_is_blamed_on_the_data_read(tmp_path: Path) -> None:
    findings, text, _ = run(
        tmp_path,
        """
        import torch
        from torch import nn
        import torch.nn.functional as F

        class WNLinear(nn.Linear):
            def __init__(self, *args):
                super().__init__(*args)
                self.g = nn.Parameter(torch.ones(self.out_features, 1))

            def forward(self, x):
                v = self.weight.data
                return F.linear(x, self.g * v / v.norm(dim=1, keepdim=True), self.bias)

        model = nn.Sequential(WNLinear(4, 3), nn.ReLU(), nn.Linear(3, 1))
        model(torch.randn(5, 4)).sum().backward()
        """,
    )
    (finding,) = [f for f in findings if f.code == "GP107"]
    assert finding.details["parameters"] == ["0.weight"]
    assert roles(finding) == {"cause": [line_of(text, "v = self.weight.data")]}
    assert "only through .data" in finding.message
    assert "GP113" not in [f.code for f in findings]


def test_a_reentrant_checkpoint_without_grad_inputs_is_named(tmp_path: Path) -> None:
    findings, text, _ = run(
        tmp_path,
        """
        import torch
        from torch import nn
        from torch.utils.checkpoint import checkpoint

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.stem = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4))
                self.head = nn.Linear(4, 2)

            def forward(self, x):
                x = checkpoint(self.stem, x, use_reentrant=True)
                return self.head(x.mean((2, 3)))

        net = Net()
        net(torch.randn(2, 3, 8, 8)).sum().backward()
        """,
    )
    by_first = {f.details["parameters"][0]: f for f in findings if f.code == "GP107"}
    assert roles(by_first["stem.0.weight"]) == {"cause": [line_of(text, "checkpoint(self.stem")]}
    # BatchNorm's weight goes to the op as a keyword: no cut names it, and its module ran,
    # so the line that built it is context, not a cause.
    assert roles(by_first["stem.1.weight"]) == {"created": [line_of(text, "self.stem = ")]}
    assert "ran" in by_first["stem.1.weight"].message


@pytest.mark.parametrize(
    ("code", "body", "needle"),
    [
        (
            "GP124",
            (
                "gates = torch.randn(2, 8, requires_grad=True) * 2\n"
                "i, f = gates.chunk(2, 1)\n"
                "i.sigmoid_()\n"
            ),
            "i.sigmoid_()",
        ),
        ("GP125", "scale = torch.nn.Parameter(torch.tensor(10))\n", "torch.tensor(10)"),
        (
            "GP126",
            "emb = torch.nn.Embedding(5, 3)(torch.tensor([1, 2]))\nemb.requires_grad = False\n",
            "emb.requires_grad",
        ),
    ],
)
def test_errors_raised_at_the_line_to_change_name_it_as_the_cause(
    tmp_path: Path, code: str, body: str, needle: str
) -> None:
    findings, text, status = run(tmp_path, "import torch\n" + body)
    assert status == 1
    (finding,) = [f for f in findings if f.code == code]
    assert roles(finding)["cause"] == [line_of(text, needle)]


@pytest.mark.parametrize("unscaled", [False, True])
def test_clipping_gradients_a_grad_scaler_left_scaled_is_named(
    tmp_path: Path, unscaled: bool
) -> None:
    unscale = "scaler.unscale_(opt)" if unscaled else "pass"
    findings, text, status = run(
        tmp_path,
        f"""
        import torch
        from torch import nn

        model = nn.Linear(4, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        scaler = torch.amp.GradScaler("cpu")
        for step in range(2):
            opt.zero_grad()
            with torch.autocast("cpu", dtype=torch.bfloat16):
                out = model(torch.randn(8, 4))
            scaler.scale(out.float().pow(2).mean()).backward()
            {unscale}
            nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
            scaler.step(opt)
            scaler.update()
        """,
    )
    assert status == 0
    codes = [f.code for f in findings]
    if unscaled:
        assert "GP127" not in codes
    else:
        assert causes(findings, "GP127") == [line_of(text, "clip_grad_norm_")]


def test_parameters_an_optimizer_holds_but_a_detach_starves_are_named(tmp_path: Path) -> None:
    findings, text, _ = run(
        tmp_path,
        """
        import torch
        from torch import nn
        import torch.nn.functional as F

        encoder = nn.Linear(8, 8)
        predictor = nn.Linear(8, 8)
        teacher = nn.Linear(8, 8)  # frozen, in no optimizer: not judged
        opt = torch.optim.SGD([*encoder.parameters(), *predictor.parameters()], lr=0.1)
        for step in range(2):
            z1, z2 = encoder(torch.randn(4, 8)), encoder(torch.randn(4, 8))
            p1 = predictor(z1)
            with torch.no_grad():
                target = teacher(z2)
            loss = -F.cosine_similarity(p1.detach(), z2 + target, dim=-1).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
    )
    (finding,) = [f for f in findings if f.code == "GP107"]
    assert finding.details["parameters"] == ["weight", "bias"]
    assert roles(finding) == {"cause": [line_of(text, "p1.detach()")]}


def test_a_buffer_written_with_a_value_that_carries_the_graph_is_the_cause(
    tmp_path: Path,
) -> None:
    findings, text, status = run(
        tmp_path,
        """
        import torch
        from torch import nn
        import torch.nn.functional as F

        encoder_q, encoder_k = nn.Linear(8, 4), nn.Linear(8, 4)
        queue = torch.randn(16, 4)
        for step in range(3):
            x = torch.randn(4, 8)
            q = F.normalize(encoder_q(x), dim=1)
            k = F.normalize(encoder_k(x), dim=1)
            logits = torch.cat([(q * k).sum(1, keepdim=True), q @ queue.T], dim=1)
            F.cross_entropy(logits, torch.zeros(4, dtype=torch.long)).backward()
            queue[step * 4 : step * 4 + 4] = k
        """,
    )
    assert status == 1
    assert causes(findings, "GP103") == [line_of(text, "queue[step")]


def test_a_rebuilt_leaf_names_the_exit_its_values_came_through(tmp_path: Path) -> None:
    """A sampled index is a cut too, but the leaf is built from the accumulator the
    log-probabilities' .item() fed: that is where the graph was lost. The parameters
    without gradient and the log-probabilities kept alive follow from it: no more
    findings."""
    findings, text, status = run(
        tmp_path,
        """
        import torch
        from torch import nn

        policy = nn.Linear(4, 3)
        opt = torch.optim.SGD(policy.parameters(), lr=0.1)
        for episode in range(3):
            total, kept = 0.0, []
            for t in range(4):
                log_probs = torch.log_softmax(policy(torch.randn(1, 4)), dim=-1)
                action = torch.multinomial(log_probs.exp(), 1).item()
                kept.append(log_probs)
                total -= log_probs[0, action].item() * 0.5  # leaves the graph
            loss = torch.tensor(total, requires_grad=True)  # a new leaf
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
    )
    assert status == 0
    assert [f.code for f in findings] == ["GP115"]
    # issue 25, invariant 8: the line where the values left autograd is the one to change
    assert roles(findings[0]) == {
        "cause": [line_of(text, "# leaves the graph")],
        "created": [line_of(text, "# a new leaf")],
    }


def test_backward_is_still_recorded_while_a_watch_session_wraps_it(tmp_path: Path) -> None:
    findings, text, status = run(
        tmp_path,
        """
        import torch
        from torch import nn
        import gradprobe

        model = nn.Linear(8, 3)
        with gradprobe.watch(model):
            loss = model(torch.randn(4, 8)).argmax(dim=1).float().mean()
            loss = torch.tensor(loss.item(), requires_grad=True)
            torch.autograd.backward(loss, inputs=[loss])
        """,
    )
    assert status == 0
    (finding,) = [f for f in findings if f.code == "GP115"]
    assert roles(finding)["cause"] == [line_of(text, "torch.tensor(loss.item()")]


def test_parameters_left_out_of_backward_inputs_are_not_reported_as_unused(
    tmp_path: Path,
) -> None:
    findings, _, status = run(
        tmp_path,
        """
        import torch
        from torch import nn

        g = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
        first, last = list(g[0].parameters()), list(g[2].parameters())
        opt = torch.optim.SGD(g.parameters(), lr=0.1)
        for step in range(4):  # alternating updates, one half per step
            opt.zero_grad()
            loss = g(torch.randn(5, 3)).pow(2).mean()
            loss.backward(inputs=iter(first if step % 2 else last))
            opt.step()
        """,
    )
    assert status == 0
    assert not [f for f in findings if f.code == "GP107"]
    # Asked for, and still cut off: reported.
    findings, _, status = run(
        tmp_path,
        """
        import torch
        from torch import nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.a, self.b = nn.Linear(3, 1), nn.Linear(3, 1)

            def forward(self, x):
                return self.a(x) + self.b(x).detach()

        model = Net()
        loss = model(torch.randn(5, 3)).sum()
        loss.backward(inputs=list(model.parameters()), retain_graph=True)
        torch.autograd.backward(loss, inputs=[model.b.weight, model.a.weight])
        """,
    )
    assert status == 0
    (finding,) = [f for f in findings if f.code == "GP107"]
    assert "b.weight" in finding.message and "b.bias" not in finding.message


def test_a_custom_backward_that_never_reads_grad_output_is_named_at_its_return(
    tmp_path: Path,
) -> None:
    source = """
        import torch
        from torch import nn

        class Swish(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * torch.sigmoid(x)

            @staticmethod
            def backward(ctx, grad_output):
                (x,) = ctx.saved_tensors
                s = torch.sigmoid(x)
                return s * (1 + x * (1 - s))

        model, head = nn.Linear(4, 4), nn.Linear(4, 1)
        for step in range(2):
            loss = head(Swish.apply(model(torch.randn(8, 4)))).pow(2).mean()
            loss.backward()
        """
    findings, text, status = run(tmp_path, source)
    assert status == 0
    (finding,) = [f for f in findings if f.code == "GP128"]
    assert roles(finding) == {
        "cause": [line_of(text, "return s * (1 + x")],
        "created": [line_of(text, "Swish.apply(")],
    }
    assert finding.node == "SwishBackward"
    assert finding.details["arrived_all_ones"] is False
    assert "not all ones" in finding.message
    # Under a bare .sum() the results are right by luck, and the finding says so.
    plain_sum = source.replace("head(Swish.apply(model(", "(Swish.apply(model(")
    findings, _, _ = run(tmp_path, plain_sum.replace(".pow(2).mean()", ".sum()"))
    (finding,) = [f for f in findings if f.code == "GP128"]
    assert finding.details["arrived_all_ones"] is True
    assert "right by luck" in finding.message
    # The chain rule kept (grad_output read), or a backward that returns only None: quiet.
    for body in ("return grad_output * s * (1 + x * (1 - s))", "return None"):
        fixed = source.replace("return s * (1 + x * (1 - s))", body)
        findings, _, status = run(tmp_path, fixed)
        assert status == 0
        assert not [f for f in findings if f.code == "GP128"], body


def test_a_tensor_kept_on_ctx_and_written_before_backward_names_the_write(
    tmp_path: Path,
) -> None:
    source = """
        import torch
        from torch import nn

        class Scale(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, w):
                ctx.x = x
                ctx.save_for_backward(w)
                return x * w

            @staticmethod
            def backward(ctx, grad_output):
                (w,) = ctx.saved_tensors
                return grad_output * w, (grad_output * ctx.x).sum(0)

        w = nn.Parameter(torch.ones(4))
        h = torch.randn(8, 4)
        y = Scale.apply(h, w)
        h.mul_(0.5)
        y.pow(2).mean().backward()
        """
    findings, text, status = run(tmp_path, source)
    assert status == 0
    (finding,) = [f for f in findings if f.code == "GP129"]
    assert roles(finding) == {
        "cause": [line_of(text, "h.mul_(0.5)")],
        "saved": [line_of(text, "ctx.x = x")],
        "created": [line_of(text, "Scale.apply(")],
    }
    assert finding.details == {"function": "Scale", "attribute": "x"}
    # Written after the backward ran, or never: nothing to report.
    after = "y.pow(2).mean().backward()\n        h.mul_(0.5)"
    for moved in (after, "y.pow(2).mean().backward()"):
        changed = source.replace("h.mul_(0.5)\n        y.pow(2).mean().backward()", moved)
        assert changed != source
        findings, _, status = run(tmp_path, changed)
        assert status == 0
        assert not [f for f in findings if f.code == "GP129"], moved


def test_a_masked_write_whose_mask_came_from_a_cut_runs_as_without_gradprobe() -> None:
    """``out[rows] = ...`` with ``rows`` made from an argmax (a cut) returns None from
    ``__setitem__``: the recorder follows the cut through it without reading the result as a
    tensor (it raised AttributeError inside the user's line)."""
    torch.manual_seed(0)
    experts = torch.nn.ModuleList(torch.nn.Linear(4, 4) for _ in range(2))
    router = torch.nn.Linear(4, 2)
    x = torch.randn(6, 4)

    def step() -> torch.Tensor:
        scores = router(x)
        chosen = scores.argmax(dim=1)
        out = torch.zeros(6, 4)
        for e in chosen.unique().tolist():
            rows = chosen == e
            out[rows] = experts[e](x[rows]) * scores[rows, e : e + 1].sigmoid()
        return out.pow(2).mean()

    plain = step()
    with record():
        recorded = step()
    assert torch.equal(plain, recorded)


def test_a_loss_rebuilt_from_float_values_names_the_float(tmp_path: Path) -> None:
    """float() takes values out of autograd as .item() does (issue 25, invariant 8)."""
    findings, text, status = run(
        tmp_path,
        """
        import torch
        from torch import nn

        policy = nn.Linear(4, 2)
        opt = torch.optim.SGD(policy.parameters(), lr=0.1)
        for step in range(2):
            logp = torch.log_softmax(policy(torch.randn(8, 4)), 1)[:, 0]
            ratios = [float(torch.exp(v)) for v in logp]  # leaves the graph
            loss = -torch.tensor(ratios).mean()
            loss.requires_grad_()
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
    )
    assert status == 0
    (finding,) = [f for f in findings if f.code == "GP115"]
    assert roles(finding)["cause"] == [line_of(text, "# leaves the graph")]


def test_backward_on_a_numpy_number_names_where_the_values_left(tmp_path: Path) -> None:
    findings, text, status = run(
        tmp_path,
        """
        import torch
        from torch import nn

        model = nn.Linear(4, 2)
        total = 0
        for i in range(3):
            logp = torch.log_softmax(model(torch.randn(1, 4)), 1)
            total -= logp[0, 1].detach().numpy() * 0.5  # leaves the graph
        total.backward()
        """,
    )
    assert status == 1
    assert [f.code for f in findings] == ["GP104"]
    assert roles(findings[0]) == {
        "cause": [line_of(text, "# leaves the graph")],
        "error": [line_of(text, "total.backward()")],
    }


def test_an_op_given_an_out_tensor_runs_as_without_gradprobe() -> None:
    """``F.normalize(..., out=v)`` (spectral_norm's power method): the recorder asks
    whether an ``out=`` was passed without taking the tensor's truth value."""
    torch.manual_seed(0)
    with record():
        layer = torch.nn.utils.parametrizations.spectral_norm(torch.nn.Linear(16, 1))
        v = torch.empty(3)
        torch.nn.functional.normalize(torch.randn(3), dim=0, out=v)
    assert layer.weight.shape == (1, 16)
    assert torch.isclose(v.norm(), torch.tensor(1.0))
