"""GP311: a post-accumulate-grad hook that treats its argument, the parameter, as the
gradient; hooks that read param.grad or only pass the parameter on are fine."""

from __future__ import annotations

from pathlib import Path

from _run import diagnose, line_of, roles

_MODEL = """
import torch
from torch import nn

model = nn.Linear(4, 2)
"""


def test_a_hook_using_its_argument_as_the_gradient_is_named(tmp_path: Path) -> None:
    found, text = diagnose(
        tmp_path,
        _MODEL
        + """
store = {}

def keep(grad):
    store["g"] = grad.detach().clone()  # the weights, not the gradient

model.weight.register_post_accumulate_grad_hook(keep)  # registered
model(torch.randn(3, 4)).sum().backward()
""",
    )
    (finding,) = [f for f in found if f.code == "GP311"]
    assert roles(finding) == [
        ("cause", line_of(text, "the weights, not the gradient")),
        ("registered", line_of(text, "# registered")),
    ]


def test_hooks_that_read_grad_or_step_an_optimizer_are_silent(tmp_path: Path) -> None:
    found, _ = diagnose(
        tmp_path,
        _MODEL
        + """
opts = {p: torch.optim.SGD([p], lr=0.1) for p in model.parameters()}

def step_now(param):
    opts[param].step()
    opts[param].zero_grad()

def clip(param):
    param.grad.clamp_(-1, 1)

model.weight.register_post_accumulate_grad_hook(step_now)
model.bias.register_post_accumulate_grad_hook(clip)
model(torch.randn(3, 4)).sum().backward()
""",
    )
    assert [f.code for f in found if f.code == "GP311"] == []


def test_a_backward_hook_returning_grad_output_is_named(tmp_path: Path) -> None:
    found, text = diagnose(
        tmp_path,
        """
        import torch
        from torch import nn

        net = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 4))

        def clip(module, grad_input, grad_output):
            return tuple(g.clamp(-1, 1) for g in grad_output)  # the wrong tuple

        def clip_right(module, grad_input, grad_output):
            return tuple(None if g is None else g.clamp(-1, 1) for g in grad_input)

        net[2].register_full_backward_hook(clip)  # registered
        net[0].register_full_backward_hook(clip_right)
        net(torch.randn(2, 4, requires_grad=True)).sum().backward()
        """,
    )
    (finding,) = [f for f in found if f.code == "GP312"]
    assert roles(finding) == [
        ("cause", line_of(text, "the wrong tuple")),
        ("registered", line_of(text, "# registered")),
    ]
