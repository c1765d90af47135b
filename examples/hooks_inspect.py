"""Inspect the hooks on a Linear and a Conv2d: what is attached, and what they receive.

A small CNN carries the usual mix of hooks: a forward hook that keeps activations, a full
backward hook on the convolution, a gradient-clipping tensor hook on a weight, and a
legacy ``register_backward_hook`` on the classifier's Linear. ``inventory`` lists them all
(and flags the legacy one); ``explain`` runs copies of each layer with both kinds of
backward hook and names every tensor the hook receives: the Linear's legacy hook gets the
bias grad summed over the batch, the input grad and the weight grad *transposed*; on a 3-D
input it gets only a flattened output grad; the Conv2d's gets input, weight and bias grads.

Run::

    python examples/hooks_inspect.py
"""

from __future__ import annotations

from functools import partial

import torch
from rich.console import Console
from torch import nn

from gradprobe.hooks import explain, inventory


class SmallCNN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        self.pool = nn.AdaptiveAvgPool2d(2)
        self.fc = nn.Linear(16, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(self.pool(torch.relu(self.conv(x))).flatten(1))


activations: dict[str, torch.Tensor] = {}


def keep_activation(module: nn.Module, args: object, output: torch.Tensor) -> None:
    activations["conv"] = output.detach()


def log_grads(module: nn.Module, grad_input: object, grad_output: object, name: str = "") -> None:
    pass


def clip(grad: torch.Tensor) -> torch.Tensor:
    return grad.clamp(-1.0, 1.0)


def main(console: Console | None = None) -> None:
    console = console or Console(width=88, highlight=False)
    torch.manual_seed(0)
    model = SmallCNN()
    model.conv.register_forward_hook(keep_activation)
    model.conv.register_full_backward_hook(log_grads)
    model.fc.weight.register_hook(clip)
    model.fc.register_backward_hook(partial(log_grads, name="fc"))

    console.print(inventory(model))
    console.print()
    console.print(explain(model.fc))
    console.print()
    console.print(explain(nn.Linear(16, 5), torch.randn(8, 10, 16, requires_grad=True)))
    console.print()
    console.print(explain(model.conv))


if __name__ == "__main__":
    main()

# expect: hooks on SmallCNN (4)
# expect: fc (Linear)    backward_legacy  partial(log_grads,
# expect: fc.weight      tensor           clip                          hooks_inspect.py:
# expect: GP301 legacy_backward_hook
# expect: register_backward_hook (legacy) grad_input, attached to AddmmBackward0
# expect: grad of weight, transposed
# expect: summed over the batch, not per-sample
# expect: attached to ViewBackward0
# expect: grad of the output, reshaped
# expect: the legacy hook sees the last operation only, not the module's inputs
# expect: attached to ConvolutionBackward0
