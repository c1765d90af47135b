"""Case 809 - non-reentrant activation checkpointing with an input-gradient penalty

Source: pytorch/pytorch test/test_autograd.py, test_checkpointing_without_reentrant_correct_grad (checkpoint with use_reentrant=False works with backward() and autograd.grad())
Category: correct

Reported symptom:
    none: the script runs to completion without error or warning.

Root cause:
    No bug. The blocks are checkpointed with use_reentrant=False passed explicitly,
    so torch.autograd.grad with create_graph=True is supported. The block's forward
    is deterministic given torch's RNG (dropout uses torch's generator, which
    checkpoint restores), it keeps no Python-side state, and the custom Function
    used inside reads ctx.saved_tensors once.

Ground truth a good tool should report:
    Nothing.

EXPECT: no findings
"""
import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)


class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return 2 * x * grad_out


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        return x + self.drop(torch.tanh(self.fc(Square.apply(x) * 0.1 + x)))


blocks = nn.ModuleList([Block(8) for _ in range(2)])
head = nn.Linear(8, 1)
opt = torch.optim.Adam([*blocks.parameters(), *head.parameters()], lr=1e-3)

x = torch.randn(16, 8, requires_grad=True)
y = torch.randn(16, 1)
for step in range(3):
    h = x
    for block in blocks:
        h = checkpoint(block, h, use_reentrant=False)
    score = head(h)
    (gx,) = torch.autograd.grad(score.sum(), x, create_graph=True)
    loss = nn.functional.mse_loss(score, y) + 0.1 * gx.pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.4f}")
