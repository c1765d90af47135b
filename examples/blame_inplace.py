"""Why did backward() fail? A residual block that writes over a tensor autograd saved.

Run it: ``python examples/blame_inplace.py``. The same script, unchanged and without the
``record()`` block, is what ``gradprobe diagnose SCRIPT`` explains from the command line.
"""

import torch
from rich.console import Console
from torch import nn

import gradprobe

# expect: GP101 inplace_modified_saved_tensor
# expect: x += self.skip(inp)
# expect: y = self.conv2(x)
# expect: GP111 freeze_did_nothing
# expect: p.require_grad = False


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(4, 4, 3, padding=1)
        self.conv2 = nn.Conv2d(4, 4, 3, padding=1)
        self.skip = nn.Conv2d(4, 4, 1)

    def forward(self, inp: torch.Tensor) -> torch.Tensor:
        x = self.conv1(inp)
        y = self.conv2(x)  # conv2 saves x for its backward
        x += self.skip(inp)  # ... and this writes over x in place
        return x + y


torch.manual_seed(0)
block = Block()
with gradprobe.record() as rec:
    for p in block.skip.parameters():
        p.require_grad = False  # meant: freeze the skip branch
    try:
        block(torch.randn(2, 4, 8, 8)).sum().backward()
    except RuntimeError as error:
        print("backward failed:", str(error)[:72], "...")

Console(width=100, color_system=None).print(rec)
