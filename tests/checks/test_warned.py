"""GP169 (gradprobe.checks.warned): torch's warnings that mean a bug, heard while recording,
and left alone where they do not; the warning machinery is the user's again afterwards and
every warning still reaches them. Also the causes read from provenance for torch errors whose
traceback shows none (saved tensors read after backward, a Function without backward)."""

from __future__ import annotations

import textwrap
import warnings
from pathlib import Path

import pytest
import torch

import gradprobe
from gradprobe.checks._errortext import explain_error
from gradprobe.diagnose import diagnose_script


def _codes(recording: gradprobe.Recording) -> list[str]:
    return [f.code for f in recording.findings]


def test_a_duplicate_parameter_names_the_list_and_the_optimizer_warned() -> None:
    emb = torch.nn.Embedding(5, 3)
    out = torch.nn.Linear(3, 5, bias=False)
    out.weight = emb.weight
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        with gradprobe.record() as rec:
            params = [*emb.parameters(), *out.parameters()]
            torch.optim.SGD(params, lr=0.1)
    (finding,) = [f for f in rec.findings if f.code == "GP169"]
    roles = {loc.role: loc.text for loc in finding.locations}
    assert roles["cause"] == "params = [*emb.parameters(), *out.parameters()]"
    assert roles["warned"] == "torch.optim.SGD(params, lr=0.1)"
    assert finding.details["entry"] == "optimizer_duplicate_params"


def test_the_scheduler_warning_is_silent_with_a_grad_scaler() -> None:
    """A GradScaler skips an overflowing step on purpose; torch then warns wrongly."""
    w = torch.nn.Parameter(torch.randn(3))
    opt = torch.optim.SGD([w], lr=0.1)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1)
    scaler = torch.amp.GradScaler("cpu", enabled=True)
    assert scaler.is_enabled()
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        with gradprobe.record() as rec:
            sched.step()
    assert "GP169" not in _codes(rec)
    del scaler
    sched = torch.optim.lr_scheduler.StepLR(torch.optim.SGD([w], lr=0.1), step_size=1)
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        with gradprobe.record() as rec:
            sched.step()  # torch warns at a scheduler's first step only
    assert "GP169" in _codes(rec)


def test_warnings_that_correct_code_triggers_give_no_finding() -> None:
    loss = (torch.randn(3, requires_grad=True) * 2).sum()
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        with gradprobe.record() as rec:
            float(loss)  # logging a loss warns in torch 2.13; nothing is wrong
            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters", stacklevel=1
            )
    assert "GP169" not in _codes(rec)  # the user's own warning is not torch's


def test_every_warning_still_reaches_the_user_and_the_hook_is_theirs_again() -> None:
    before = warnings._showwarnmsg  # type: ignore[attr-defined]
    w = torch.nn.Parameter(torch.randn(3))
    opt = torch.optim.SGD([w], lr=0.1)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with gradprobe.record() as rec:
            sched.step()
            warnings.warn("the user's own", UserWarning, stacklevel=1)
    texts = [str(w.message) for w in caught]
    assert any("lr_scheduler.step()" in text for text in texts)
    assert "the user's own" in texts
    assert "GP169" in _codes(rec)
    assert warnings._showwarnmsg is before  # type: ignore[attr-defined]


def test_the_hook_is_undone_when_the_recorded_code_raises() -> None:
    before = warnings._showwarnmsg  # type: ignore[attr-defined]
    with pytest.raises(ValueError), gradprobe.record():
        raise ValueError("the user's")
    assert warnings._showwarnmsg is before  # type: ignore[attr-defined]


def test_saved_tensors_read_after_backward_name_the_reading_line() -> None:
    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):  # type: ignore[no-untyped-def]
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad):  # type: ignore[no-untyped-def]
            (x,) = ctx.saved_tensors
            return 2 * x * grad

    x = torch.randn(3, requires_grad=True)
    y = Square.apply(x)
    y.sum().backward()
    with pytest.raises(RuntimeError) as raised:
        y.grad_fn.saved_tensors  # noqa: B018  (the read is what raises)
    finding = explain_error(raised.value)
    assert finding is not None and finding.code == "GP103"
    assert finding.cause is not None and "saved_tensors" in (finding.cause.text or "")


def test_a_function_without_backward_names_its_misspelled_method(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text(
        textwrap.dedent(
            """
            import torch

            class Round(torch.autograd.Function):
                @staticmethod
                def forward(ctx, x):
                    return torch.round(x)

                @staticmethod
                def backwrd(ctx, grad):
                    return grad

            x = torch.randn(3, requires_grad=True)
            Round.apply(x * 2).sum().backward()
            """
        )
    )
    result = diagnose_script(script)
    (finding,) = [f for f in result.findings if f.code == "GP168"]
    assert finding.cause is not None and finding.cause.text == "def backwrd(ctx, grad):"


def test_a_half_model_under_a_scaler_names_the_half_call() -> None:
    half, to = torch.nn.Module.half, torch.nn.Module.to
    with pytest.raises(ValueError), gradprobe.record() as rec:
        model = torch.nn.Linear(3, 1)
        model = model.to(torch.float16)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        scaler = torch.amp.GradScaler("cpu")
        scaler.scale(model(torch.randn(4, 3).half()).float().sum()).backward()
        scaler.step(opt)
    (finding,) = [f for f in rec.findings if f.code == "GP162"]
    roles = {loc.role: loc.text for loc in finding.locations}
    assert roles["cause"] == "model = model.to(torch.float16)"
    assert roles["error"] == "scaler.step(opt)"
    assert (torch.nn.Module.half, torch.nn.Module.to) == (half, to)
    assert model.weight.dtype == torch.float16  # the conversion itself is unchanged
