"""GP309: a tensor hook that writes to the gradient it was given, named at the write."""

from __future__ import annotations

import textwrap
from pathlib import Path

from gradprobe.diagnose import diagnose_script
from gradprobe.findings import Finding

_SCRIPT = """
    import torch
    from torch import nn

    layer = nn.Linear(6, 3)
    h = layer(torch.randn(4, 6))

    def halve(grad):
        {body}

    h.register_hook(halve)
    {loss}.backward()
"""


def run(tmp_path: Path, body: str, loss: str) -> tuple[list[Finding], str]:
    text = textwrap.dedent(_SCRIPT.format(body=body, loss=loss)).lstrip()
    script = tmp_path / "hooked.py"
    script.write_text(text)
    return [f for f in diagnose_script(script).findings if f.code == "GP309"], text


def line_of(text: str, needle: str) -> int:
    (hit,) = [n for n, line in enumerate(text.splitlines(), start=1) if needle in line]
    return hit


def test_a_write_that_fails_on_the_expanded_gradient_of_a_sum(tmp_path: Path) -> None:
    (finding,), text = run(tmp_path, "grad.mul_(0.5)", "h.sum()")
    assert [(loc.role, loc.line) for loc in finding.locations] == [
        ("cause", line_of(text, "grad.mul_(0.5)")),
        ("registered", line_of(text, "h.register_hook(halve)")),
    ]
    assert finding.details == {"hook": "halve", "failed": True}
    assert "expanded tensor" in finding.message


def test_a_write_that_succeeds_is_named_too(tmp_path: Path) -> None:
    loss = "(h * torch.arange(3.0)).sum()"
    for body, needle in [
        ("grad *= 0.5", "grad *= 0.5"),
        ("return grad.clamp_(-1, 1)", "grad.clamp_"),
        ("grad[0] = 0\n        return grad", "grad[0] = 0"),
    ]:
        (finding,), text = run(tmp_path, body, loss)
        assert finding.locations[0].line == line_of(text, needle), body
        assert finding.details == {"hook": "halve", "failed": False}


def test_a_hook_that_returns_a_new_gradient_is_not_named(tmp_path: Path) -> None:
    for body in ("return grad * 0.5", "return grad.clamp(-1, 1)", "print(grad.norm())"):
        findings, _ = run(tmp_path, body, "h.sum()")
        assert findings == [], body


def test_the_users_hook_is_back_in_place_after_the_recording() -> None:
    import torch

    import gradprobe

    def halve(grad: torch.Tensor) -> torch.Tensor:
        return grad * 0.5

    x = torch.ones(3, requires_grad=True)
    with gradprobe.record():
        y = x * 2
        y.register_hook(halve)
        assert list(y._backward_hooks.values()) != [halve]  # watched while recording
    assert list(y._backward_hooks.values()) == [halve]
    y.sum().backward()
    assert x.grad is not None and x.grad.tolist() == [1.0, 1.0, 1.0]


def test_a_bound_method_hook_is_named_at_its_write_to_the_gradient(tmp_path: Path) -> None:
    """A method registered as a hook gets the gradient as its second argument (after
    self): the write to it is the cause, not the method's return."""
    text = textwrap.dedent(
        """
        import torch
        from torch import nn

        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.branch = nn.Linear(4, 4)
                self.scale = 0.1

            def forward(self, x):
                r = self.branch(x)
                r.register_hook(self.scale_grad)
                return x + r

            def scale_grad(self, g):
                self.seen = True
                g.mul_(self.scale)  # the write
                return g

        Block()(torch.randn(2, 4, requires_grad=True)).pow(2).sum().backward()
        """
    ).lstrip()
    script = tmp_path / "method_hook.py"
    script.write_text(text)
    (finding,) = [f for f in diagnose_script(script).findings if f.code == "GP309"]
    assert finding.locations[0].line == line_of(text, "# the write")
