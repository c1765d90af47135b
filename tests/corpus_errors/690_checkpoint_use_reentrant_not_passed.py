"""Case 690 - torch.utils.checkpoint called without choosing use_reentrant

Source: pytorch/pytorch test/test_utils.py, TestCheckpoint tests (every call passes use_reentrant explicitly; torch warns when it is omitted)
Category: activation checkpointing (warning)

Reported symptom:
    UserWarning: torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting in PyTorch 2.9, calling checkpoint without use_reentrant will raise an exception. use_reentrant=False is recommended, but if you need to preserve the current default behavior, you can pass use_reentrant=True. Refer to docs for more details on the differences between the two variants.

Root cause:
    The residual tower wraps each block in torch.utils.checkpoint.checkpoint
    without the use_reentrant argument. The implicit default is the legacy
    reentrant variant (which, among other things, cannot be used with
    torch.autograd.grad); torch requires the choice to be explicit.

Ground truth a good tool should report:
    The checkpoint(...) call in Tower.forward (CAUSE/ERROR) omits
    use_reentrant; pass use_reentrant=False.
"""
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)


class Tower(nn.Module):
    def __init__(self, dim=32, depth=4):
        super().__init__()
        self.blocks = nn.ModuleList(
            [nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, dim), nn.GELU()) for _ in range(depth)]
        )

    def forward(self, h):
        for block in self.blocks:
            h = h + checkpoint(block, h)  # <- CAUSE,ERROR
        return h


model = nn.Sequential(nn.Linear(10, 32), Tower(), nn.Linear(32, 1))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
x, y = torch.randn(16, 10), torch.randn(16, 1)
opt.zero_grad()
loss = nn.functional.mse_loss(model(x), y)
loss.backward()
opt.step()
print("loss", loss.item())
