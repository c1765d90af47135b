"""Print the order in which every kind of hook fires during one training step.

An MLP gets forward pre-hooks and forward hooks, full backward pre-hooks and hooks, a
tensor hook on an activation (registered from a forward hook, as gradient-capturing tools
do), hooks on the autograd node that produced it, and a tensor hook plus a
post-accumulate-grad hook on a weight. ``timeline`` runs the step and lists each hook
call in order; afterwards every hook is exactly as it was.

Things to notice in the output: forward hooks see the real op node, the backward
pre-hook of a module fires before the hooks on its output's node, and a module's full
backward hook fires only after its parameters' gradients were accumulated.

Run::

    python examples/hook_timeline.py
"""

from __future__ import annotations

from collections import OrderedDict

import torch
from rich.console import Console
from torch import nn

from gradprobe.hooks import timeline


def before_forward(module: nn.Module, args: object) -> None:
    pass


def capture_gradient(module: nn.Module, args: object, output: torch.Tensor) -> None:
    output.register_hook(activation_grad)
    assert output.grad_fn is not None
    output.grad_fn.register_prehook(node_pre)
    output.grad_fn.register_hook(node_post)


def activation_grad(grad: torch.Tensor) -> None:
    pass


def node_pre(grad_outputs: object) -> None:
    pass


def node_post(grad_inputs: object, grad_outputs: object) -> None:
    pass


def backward_pre(module: nn.Module, grad_output: object) -> None:
    pass


def backward(module: nn.Module, grad_input: object, grad_output: object) -> None:
    pass


def weight_grad(grad: torch.Tensor) -> None:
    pass


def after_accumulate(param: torch.Tensor) -> None:
    pass


def main(console: Console | None = None) -> None:
    console = console or Console(width=88, highlight=False)
    torch.manual_seed(0)
    mlp = nn.Sequential(OrderedDict(hidden=nn.Linear(3, 4), act=nn.Tanh(), out=nn.Linear(4, 1)))
    mlp.register_forward_pre_hook(before_forward)
    mlp.hidden.register_forward_hook(capture_gradient)
    for layer in (mlp.hidden, mlp.out):
        layer.register_full_backward_pre_hook(backward_pre)
        layer.register_full_backward_hook(backward)
    mlp.hidden.weight.register_hook(weight_grad)
    mlp.hidden.weight.register_post_accumulate_grad_hook(after_accumulate)
    # requires_grad: otherwise the first layer's full hook fires early, with grad_input=(None,)
    x = torch.randn(8, 3, requires_grad=True)

    def step() -> None:
        loss = mlp(x).pow(2).mean()
        loss.backward()

    console.print(timeline(step, model=mlp))


if __name__ == "__main__":
    main()

# expect: hook timeline (11 calls)
# expect: forward   forward_pre      Sequential                      before_forward
# expect: backward  backward_pre     out (Linear)
# expect: backward  post_accumulate  hidden.weight                   after_accumulate
# expect: backward  backward         hidden (Linear)                 backward
