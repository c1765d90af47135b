"""Case 920 - layer-wise learning-rate decay applied once, scheduler on top (correct)

Source: https://github.com/jaehyunnn/ViTPose_pytorch/issues/20
        "LayerDecayOptimizer was incorrectly applying layer decay every step instead of once at initialization"
Category: correct (invariant 4)
EXPECT: no findings

Reported symptom:
    None. Lower blocks get smaller learning rates than the head; a cosine
    schedule scales all groups over training.

Root cause:
    None. The per-group learning rates are computed once when the param groups
    are built; the LambdaLR schedule multiplies each group's initial lr by the
    same factor per iteration, so no group's lr collapses to zero and every step
    changes every trainable block.

Ground truth a good tool should report:
    Nothing.
"""
import math

import torch
import torch.nn.functional as F

from model import TinyViTHead
from optim.layer_decay import layer_groups

torch.manual_seed(0)

x = torch.randn(512, 24)
y = torch.sin(x[:, :6] * 2) + x[:, 6:12] ** 2 * 0.3

model = TinyViTHead()
optimizer = torch.optim.AdamW(layer_groups(model, base_lr=3e-3, rate=0.75), weight_decay=0.01)
total = 40
scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda it: 0.55 + 0.45 * math.cos(math.pi * it / total))

for step in range(total):
    idx = torch.randint(0, 512, (64,))
    loss = F.mse_loss(model(x[idx]), y[idx])
    if step == 0:
        first = loss.item()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    scheduler.step()

lrs = [f"{g['lr']:.1e}" for g in optimizer.param_groups]
print(f"group lrs {lrs}")
print(f"loss {first:.4f} -> {loss.item():.4f}")
