"""Correct 324 - activation checkpointing with use_reentrant=False on segments whose input does not require grad

Pattern: https://docs.pytorch.org/docs/stable/checkpoint.html
         (use_reentrant=False: "supports ... inputs that do not require grad";
         the fix recommended for the reentrant variant's "None of the inputs
         have requires_grad=True" warning)
Category: correct (torch.utils.checkpoint)

What it does:
    A small conv net checkpoints its stem and each residual stage with
    torch.utils.checkpoint.checkpoint(..., use_reentrant=False).  The stem's
    input is the raw image batch (requires_grad=False), a stage contains
    Dropout (the RNG state is preserved for the recomputation) and one
    segment gets a non-tensor keyword argument.  One training step is compared
    with the same model run without checkpointing: every parameter gets the
    same gradient, and none is missing.

Why a naive tool might flag it:
    The first checkpointed segment receives an input that does not require
    grad (the situation that silently drops gradients with
    use_reentrant=True), the forward of each segment runs twice, Dropout is
    recomputed inside backward.

Ground truth a good tool should report:
    Nothing.
    EXPECT: no findings

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        params without grad: []
        max |grad difference| vs. no checkpoint: 0.0
        loss 2.4332 -> 1.8726
"""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)


class ResStage(nn.Module):
    def __init__(self, c, p_drop=0.1):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1)
        self.bn = nn.BatchNorm2d(c, track_running_stats=False)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1)
        self.drop = nn.Dropout(p_drop)

    def forward(self, x, scale=1.0):
        h = self.drop(F.relu(self.bn(self.conv1(x))))
        return x + scale * self.conv2(h)


class CkptNet(nn.Module):
    def __init__(self, use_ckpt=True):
        super().__init__()
        self.use_ckpt = use_ckpt
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU())
        self.stages = nn.ModuleList([ResStage(8), ResStage(8)])
        self.fc = nn.Linear(8, 10)

    def _run(self, fn, *args, **kwargs):
        if self.use_ckpt:
            return checkpoint(fn, *args, use_reentrant=False, **kwargs)
        return fn(*args, **kwargs)

    def forward(self, images):
        x = self._run(self.stem, images)
        for i, stage in enumerate(self.stages):
            x = self._run(stage, x, scale=0.5 if i else 1.0)
        return self.fc(x.mean(dim=(2, 3)))


model = CkptNet(use_ckpt=True)
reference = copy.deepcopy(model)
reference.use_ckpt = False

images = torch.randn(8, 3, 8, 8)
labels = torch.randint(0, 10, (8,))

for net in (model, reference):
    torch.manual_seed(1)                       # same dropout masks in both runs
    F.cross_entropy(net(images), labels).backward()
print("params without grad:", [n for n, p in model.named_parameters() if p.grad is None])
diff = max((p.grad - q.grad).abs().max().item()
           for p, q in zip(model.parameters(), reference.parameters()))
print("max |grad difference| vs. no checkpoint:", round(diff, 6))

optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
for step in range(6):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(images), labels)
    if step == 0:
        first = loss.item()
    loss.backward()
    optimizer.step()
print(f"loss {first:.4f} -> {loss.item():.4f}")
