"""Which step, and which module, produced the first NaN of a training loop?

A small regressor standardizes each input row (``RowNorm``). At step 7 the data pipeline
delivers a batch with a constant row: its standard deviation is 0, and 0 / 0 is NaN.
The loss turns NaN and the loop stops; ``watch`` names the step and the module, although
no full statistics were sampled at that step (NaN/Inf checks run at every step).

Run it: ``python examples/watch_nan.py``.
"""

from collections import OrderedDict

import torch
from rich.console import Console
from torch import nn

from gradprobe._watch import watch

# expect: step 6 loss
# expect: step 7 loss nan: stopping
# expect: first non-finite activation: step 7, module 'norm' (RowNorm)
# expect: GP201 nan_in_forward
# expect: GP202 nan_in_backward


class RowNorm(nn.Module):
    """Scales every row to zero mean and unit standard deviation."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x - x.mean(dim=1, keepdim=True)) / x.std(dim=1, keepdim=True)


def batch(step: int) -> tuple[torch.Tensor, torch.Tensor]:
    x = torch.randn(32, 16)
    if step == 7:
        x[3] = 1.0  # a constant row: std 0
    return x, x[:, :4].sum(dim=1, keepdim=True)


torch.manual_seed(0)
model = nn.Sequential(
    OrderedDict(norm=RowNorm(), fc1=nn.Linear(16, 32), act=nn.ReLU(), fc2=nn.Linear(32, 1))
)
opt = torch.optim.SGD(model.parameters(), lr=0.05)

with watch(model, optimizer=opt, sample_every=5) as session:
    for step in range(20):
        opt.zero_grad()
        x, y = batch(step)
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        if not torch.isfinite(loss):
            print(f"step {step} loss {loss.item()}: stopping")
            break
        opt.step()
        print(f"step {step} loss {loss.item():.3f}")

nan = next(f for f in session.findings() if f.code == "GP201")
print(
    f"first non-finite activation: step {nan.details['step']}, "
    f"module {nan.module!r} ({type(model.get_submodule(nan.module)).__name__})"
)
session.report(Console(width=88, color_system=None))
