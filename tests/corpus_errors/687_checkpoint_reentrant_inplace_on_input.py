"""Case 687 - reentrant-checkpointed block applies relu_ to its own input

Source: pytorch/pytorch test/test_utils.py, TestCheckpoint.test_checkpoint (reentrant recomputation runs the block on detached leaf inputs that require grad)
Category: activation checkpointing (reentrant) + in-place

Reported symptom:
    RuntimeError: a leaf Variable that requires grad is being used in an in-place operation.

Root cause:
    PreActBlock starts with `x.relu_()` on the tensor it receives. In the
    checkpointed forward this runs under no_grad and passes, but during the
    backward the reentrant checkpoint recomputes the block on detached copies
    of its inputs that are leaves with requires_grad=True; the in-place relu_
    on such a leaf is forbidden. (It also silently overwrote the caller's
    activation in the first forward.)

Ground truth a good tool should report:
    `x.relu_()` in PreActBlock.forward (CAUSE/ERROR) modifies the block input
    in place; use `x = torch.relu(x)`.
"""
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)


class PreActBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        x.relu_()  # <- CAUSE,ERROR
        return self.fc(x)


class Net(nn.Module):
    def __init__(self, dim=16, depth=3):
        super().__init__()
        self.inp = nn.Linear(8, dim)
        self.blocks = nn.ModuleList([PreActBlock(dim) for _ in range(depth)])
        self.out = nn.Linear(dim, 1)

    def forward(self, x):
        h = self.inp(x)
        for block in self.blocks:
            h = checkpoint(block, h, use_reentrant=True)
        return self.out(h)


net = Net()
opt = torch.optim.SGD(net.parameters(), lr=0.1)
x, y = torch.randn(12, 8), torch.randn(12, 1)
opt.zero_grad()
loss = nn.functional.mse_loss(net(x), y)
loss.backward()
opt.step()
print("loss", loss.item())
