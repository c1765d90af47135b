"""Case 516 - layer-wise lr decay multiplied into the learning rate at every step

Source: https://github.com/jaehyunnn/ViTPose_pytorch/issues/20
        "The learning rate warms up to the preset value during training and quickly becomes 0"
Category: 4 - a step changes what it should and nothing else

Reported symptom:
    The logged learning rate reaches its preset value and then collapses to 0
    within a few iterations, although training keeps running; the backbone stops
    changing while the loss plateaus.

Root cause:
    LayerDecayOptimizer.step() multiplies each param group's lr by its layer
    scale (rate ** depth) on every call, instead of applying the scale once when
    the groups are built. After k steps a group's lr is base_lr * scale ** k, so
    every group except the top one decays geometrically to zero.

Ground truth a good tool should report:
    The steps stop changing the lower-layer parameters: their effective learning
    rate shrinks geometrically to ~0 after a few steps. The lr is rescaled inside
    step() in optim/layer_decay.py (the `group["lr"] = group["lr"] * group["lr_scale"]` line).
"""
import torch
import torch.nn.functional as F

from model import TinyViTHead
from optim.layer_decay import LayerDecayOptimizer, layer_groups

torch.manual_seed(0)

x = torch.randn(512, 24)
y = torch.sin(x[:, :6] * 2) + x[:, 6:12] ** 2 * 0.3

model = TinyViTHead()
base = torch.optim.AdamW(layer_groups(model, base_lr=3e-3, rate=0.5), weight_decay=0.01)
optimizer = LayerDecayOptimizer(base)
first_block = model.blocks[0][0].weight.detach().clone()

for step in range(30):
    idx = torch.randint(0, 512, (64,))
    loss = F.mse_loss(model(x[idx]), y[idx])
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

lrs = [f"{g['lr']:.2e}" for g in base.param_groups]
print(f"group lrs after training: {lrs}")
print(f"final loss {loss.item():.4f}")
