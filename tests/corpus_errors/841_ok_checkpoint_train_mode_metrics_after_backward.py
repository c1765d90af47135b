"""Case 841 - checkpointed dropout blocks, metrics computed in eval mode after backward

Source: pytorch/pytorch test/test_utils.py, TestCheckpoint.test_checkpoint / test_checkpoint_rng_cpu and test/distributed/_composable/test_checkpoint.py, test_checkpoint_kwargs (deterministic recomputation)
Category: correct

Reported symptom:
    none - the script trains for a few steps and exits normally.

Root cause:
    none - blocks are checkpointed with an explicit use_reentrant=False; the
    model stays in train mode between the forward and backward (checkpoint
    restores the RNG state so dropout is recomputed identically); the eval
    pass for accuracy happens after the optimizer step and train mode is
    restored; the reentrant stem checkpoint receives an input that requires
    grad, and checkpointing is skipped for the no_grad evaluation forward.

Ground truth a good tool should report:
    Nothing.
EXPECT: no findings
"""
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)


class Block(nn.Module):
    def __init__(self, dim, p=0.2):
        super().__init__()
        self.fc1 = nn.Linear(dim, 2 * dim)
        self.drop = nn.Dropout(p)
        self.fc2 = nn.Linear(2 * dim, dim)

    def forward(self, x):
        return x + self.fc2(self.drop(self.fc1(x).relu()))


class Classifier(nn.Module):
    def __init__(self, dim=16, depth=3, classes=4):
        super().__init__()
        self.inp = nn.Linear(8, dim)
        self.stem = nn.Sequential(nn.LayerNorm(dim), nn.GELU())
        self.blocks = nn.ModuleList([Block(dim) for _ in range(depth)])
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        h = self.inp(x)
        use_ckpt = self.training and torch.is_grad_enabled()
        h = checkpoint(self.stem, h, use_reentrant=True) if use_ckpt else self.stem(h)
        for block in self.blocks:
            h = checkpoint(block, h, use_reentrant=False) if use_ckpt else block(h)
        return self.head(h)


model = Classifier()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
x = torch.randn(32, 8)
y = torch.randint(0, 4, (32,))
for step in range(3):
    model.train()
    opt.zero_grad()
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    model.eval()
    with torch.no_grad():
        acc = (model(x).argmax(-1) == y).float().mean().item()
    model.train()
    print("step", step, round(loss.item(), 4), "acc", acc)
