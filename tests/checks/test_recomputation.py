"""GP181/GP182: a module a backward runs again changes state (invariant 7)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import torch
import torch.utils.checkpoint

import gradprobe
from gradprobe.diagnose import diagnose_script
from gradprobe.findings import Finding


def run(tmp_path: Path, source: str) -> tuple[list[Finding], str]:
    script = tmp_path / "train.py"
    text = textwrap.dedent(source).lstrip("\n")
    script.write_text(text)
    result = diagnose_script(script)
    assert result.exit_code == 0
    return [f for f in result.findings if f.code in ("GP181", "GP182")], text


def line_of(text: str, needle: str) -> int:
    (hit,) = [n for n, line in enumerate(text.splitlines(), start=1) if needle in line]
    return hit


def causes(findings: list[Finding]) -> list[tuple[str, int]]:
    return [(f.code, loc.line) for f in findings for loc in f.locations if loc.role == "cause"]


_CHECKPOINTED = """
    import torch
    from torch.utils.checkpoint import checkpoint

    torch.manual_seed(0)
    block = torch.nn.Sequential(torch.nn.Linear(6, 8), {layer})
    head = torch.nn.Linear(8, 2)
    opt = torch.optim.SGD([*block.parameters(), *head.parameters()], lr=0.1)
    {mode}
    for step in range(3):
        x = torch.randn(16, 6, requires_grad=True)
        h = checkpoint(block, x, use_reentrant={reentrant}{rng})
        loss = head(h).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
"""


@pytest.mark.parametrize("reentrant", [False, True])
def test_a_checkpointed_batch_norm_in_train_mode_is_named_at_the_checkpoint(
    tmp_path: Path, reentrant: bool
) -> None:
    found, text = run(
        tmp_path,
        _CHECKPOINTED.format(layer="torch.nn.BatchNorm1d(8)", mode="", reentrant=reentrant, rng=""),
    )
    assert causes(found) == [("GP181", line_of(text, "h = checkpoint("))]
    assert found[0].details == {"module": "Sequential", "buffers": ["1.num_batches_tracked"]}


@pytest.mark.parametrize(
    ("layer", "mode"),
    [
        ("torch.nn.BatchNorm1d(8)", "block[1].eval()  # frozen statistics"),
        ("torch.nn.LayerNorm(8)", ""),
        ("torch.nn.Dropout(0.3)", ""),
    ],
    ids=["frozen-batch-norm", "no-buffers", "dropout-rng-preserved"],
)
def test_a_rerun_that_leaves_the_state_alone_is_not_named(
    tmp_path: Path, layer: str, mode: str
) -> None:
    for reentrant in (False, True):
        source = _CHECKPOINTED.format(layer=layer, mode=mode, reentrant=reentrant, rng="")
        assert run(tmp_path, source)[0] == []


@pytest.mark.parametrize("reentrant", [False, True])
def test_dropout_rerun_without_the_rng_state_is_named_at_the_checkpoint(
    tmp_path: Path, reentrant: bool
) -> None:
    source = _CHECKPOINTED.format(
        layer="torch.nn.Dropout(0.3)",
        mode="",
        reentrant=reentrant,
        rng=", preserve_rng_state=False",
    )
    found, text = run(tmp_path, source)
    assert causes(found) == [("GP182", line_of(text, "h = checkpoint("))]
    assert "preserve_rng_state" in (found[0].hint or "")


_BY_HAND = """
    import torch

    torch.manual_seed(0)

    class Recompute(torch.autograd.Function):
        @staticmethod
        def forward(ctx, run, x):
            ctx.run, ctx.rng = run, torch.get_rng_state()
            ctx.save_for_backward(x)
            with torch.no_grad():
                return run(x)

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            x = x.detach().requires_grad_()
            with torch.enable_grad():
                {restore}
                out = ctx.run(x)
            return None, torch.autograd.grad(out, x, grad)[0]

    block = torch.nn.Sequential(torch.nn.Linear(6, 6), torch.nn.Dropout(0.3))
    for step in range(3):
        x = torch.randn(16, 6, requires_grad=True)
        Recompute.apply(block, x).sum().backward()
"""


def test_a_hand_written_rerun_without_the_rng_state_is_named_at_the_rerun(
    tmp_path: Path,
) -> None:
    found, text = run(tmp_path, _BY_HAND.format(restore="pass"))
    assert causes(found) == [("GP182", line_of(text, "out = ctx.run(x)"))]


def test_a_hand_written_rerun_that_restores_the_rng_state_is_not_named(tmp_path: Path) -> None:
    restore = """fork = torch.random.fork_rng()
                fork.__enter__()
                torch.set_rng_state(ctx.rng)"""
    source = _BY_HAND.format(restore=restore).replace(
        "            return None, torch.autograd.grad",
        "                fork.__exit__(None, None, None)\n            return None, torch.autograd.grad",
    )
    assert run(tmp_path, source)[0] == []


def test_gradient_noise_drawn_in_hooks_is_not_named(tmp_path: Path) -> None:
    source = _CHECKPOINTED.format(
        layer="torch.nn.Dropout(0.3)", mode="", reentrant=False, rng=""
    ).replace(
        "    for step in range(3):",
        "    for p in head.parameters():\n"
        "        p.register_hook(lambda g: g + 0.01 * torch.randn_like(g))\n"
        "    for step in range(3):",
    )
    assert run(tmp_path, source)[0] == []


def test_the_checkpoint_patch_is_undone_and_changes_no_result() -> None:
    original = torch.utils.checkpoint.checkpoint
    block = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Dropout(0.5))
    x = torch.randn(8, 4, requires_grad=True)
    torch.manual_seed(1)
    expected = original(block, x, use_reentrant=False)
    expected.sum().backward()
    plain = x.grad.clone()
    x.grad = None
    with gradprobe.record():
        torch.manual_seed(1)
        got = torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False)
        got.sum().backward()
    assert torch.utils.checkpoint.checkpoint is original
    assert torch.equal(got, expected)
    assert torch.equal(x.grad, plain)
