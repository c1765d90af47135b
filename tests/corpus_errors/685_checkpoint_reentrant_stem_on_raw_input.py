"""Case 685 - reentrant checkpoint of the stem applied directly to the data batch

Source: pytorch/pytorch torch/utils/checkpoint.py warning exercised by test/test_utils.py, TestCheckpoint.test_checkpoint_partial_grad / test_checkpoint_non_tensor (reentrant checkpoint whose inputs do not require grad)
Category: activation checkpointing (reentrant, warning)

Reported symptom:
    UserWarning: None of the inputs have requires_grad=True. Gradients will be None

Root cause:
    Every block of the network, including the first one, is wrapped in
    checkpoint(..., use_reentrant=True). The first block receives the raw data
    batch, which does not require grad. The reentrant implementation only
    produces an output that requires grad when some *tensor input* does, so the
    stem's output does not require grad, the next checkpointed blocks see the
    same situation, and only the head is trained: the stem and all blocks are
    silently frozen (the warning repeats for each checkpoint call).

Ground truth a good tool should report:
    The reentrant checkpoint call on the stem (CAUSE/ERROR) gets no input that
    requires grad; use use_reentrant=False (or do not checkpoint the stem).
"""
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)


class DeepMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Linear(10, 32), nn.ReLU())
        self.blocks = nn.ModuleList([nn.Sequential(nn.Linear(32, 32), nn.ReLU()) for _ in range(3)])
        self.head = nn.Linear(32, 1)

    def forward(self, x):
        h = checkpoint(self.stem, x, use_reentrant=True)  # <- CAUSE,ERROR
        for block in self.blocks:
            h = h + checkpoint(block, h, use_reentrant=True)
        return self.head(h)


model = DeepMLP()
opt = torch.optim.SGD(model.parameters(), lr=0.05)
x, y = torch.randn(32, 10), torch.randn(32, 1)
for step in range(2):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    print("step", step, "stem grad:", model.stem[0].weight.grad)
