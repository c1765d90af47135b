"""Clean 411 - CNN whose stages (stem included) run under non-reentrant activation
checkpointing, with ReLU(inplace=True) inside the checkpointed Sequentials

What it does:
    Each stage is nn.Sequential(Conv2d, GroupNorm, ReLU(inplace=True), Conv2d,
    GroupNorm, ReLU(inplace=True)) and is called through
    torch.utils.checkpoint.checkpoint(stage, x, use_reentrant=False).  The first
    stage receives the raw image batch, which does not require grad.  The run checks
    that every parameter, including the stem's, gets a gradient, and compares the
    gradients with a plain (non-checkpointed) forward of the same model.

Why it is correct (not a bug):
    With use_reentrant=False the recomputation is driven by saved-tensor hooks, so
    parameters inside the first checkpointed segment receive gradients even though
    the segment's input does not require grad (the reentrant variant would leave them
    None, cases-2/22).  The in-place ReLUs act on fresh GroupNorm outputs that nothing
    else reads (GroupNorm's backward does not need its output), both in the original
    forward and in the recomputation.
    EXPECT: no findings

Observed (torch 2.13, CPU):
    exit code: 0
    stdout:
        params without grad: []; grads match non-checkpointed run: True
        step 0: loss=2.4871
        step 1: loss=2.1469
        step 2: loss=1.9895
        step 3: loss=1.8855
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)


def stage(cin, cout, stride):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride=stride, padding=1), nn.GroupNorm(4, cout),
                         nn.ReLU(inplace=True), nn.Conv2d(cout, cout, 3, padding=1),
                         nn.GroupNorm(4, cout), nn.ReLU(inplace=True))


class CheckpointedCNN(nn.Module):
    def __init__(self, use_ckpt=True):
        super().__init__()
        self.stages = nn.ModuleList([stage(3, 16, 1), stage(16, 32, 2), stage(32, 32, 2)])
        self.head = nn.Linear(32, 10)
        self.use_ckpt = use_ckpt

    def forward(self, x):
        for s in self.stages:
            x = checkpoint(s, x, use_reentrant=False) if self.use_ckpt else s(x)
        return self.head(x.mean(dim=(2, 3)))


model = CheckpointedCNN()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
images, labels = torch.randn(8, 3, 16, 16), torch.randint(0, 10, (8,))

reference = CheckpointedCNN(use_ckpt=False)
reference.load_state_dict(model.state_dict())
F.cross_entropy(reference(images), labels).backward()

for step in range(4):
    loss = F.cross_entropy(model(images), labels)
    optimizer.zero_grad()
    loss.backward()
    if step == 0:
        missing = [n for n, p in model.named_parameters() if p.grad is None]
        same = all(torch.allclose(p.grad, r.grad, atol=1e-6)
                   for p, r in zip(model.parameters(), reference.parameters()))
        print(f"params without grad: {missing}; grads match non-checkpointed run: {same}")
    optimizer.step()
    print(f"step {step}: loss={loss.item():.4f}")
