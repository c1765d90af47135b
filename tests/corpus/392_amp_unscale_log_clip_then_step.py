"""Clean 392 - mixed precision with GradScaler: unscale_, log the gradient norms, clip
with a parameter list, then step, update and zero_grad

What it does:
    Regression MLP under torch.autocast (bfloat16 on CPU) with a GradScaler.  Between
    backward and step it calls scaler.unscale_(optimizer), reads every parameter's
    .grad to log per-layer norms, clips with clip_grad_norm_ over an explicit list of
    parameters, then scaler.step / scaler.update and zero_grad(set_to_none=True).

Why it is correct (not a bug):
    Reading .grad between backward() and step() is only logging; unscale_ before
    clipping is the documented order, so the clip threshold applies to the true
    gradients; clip_grad_norm_ accepts any iterable of tensors (a list here); the
    gradients are cleared after the step, not between backward and step.
    EXPECT: no findings

Observed (torch 2.13, CPU):
    exit code: 0
    stdout:
        step 0: loss=0.6576  grad norm before clip=0.502  per-layer={'0.weight': 0.1937, '2.weight': 0.325, '4.weight': 0.3208}
        step 1: loss=0.9281  grad norm before clip=0.804  per-layer={'0.weight': 0.2152, '2.weight': 0.4087, '4.weight': 0.4056}
        step 2: loss=0.5019  grad norm before clip=0.510  per-layer={'0.weight': 0.1394, '2.weight': 0.3308, '4.weight': 0.3592}
        step 3: loss=0.8273  grad norm before clip=0.658  per-layer={'0.weight': 0.2205, '2.weight': 0.3974, '4.weight': 0.3892}
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(16, 64), nn.GELU(), nn.Linear(64, 64), nn.GELU(), nn.Linear(64, 1))
decay_params = [p for n, p in model.named_parameters() if p.ndim == 2]
other_params = [p for n, p in model.named_parameters() if p.ndim != 2]
optimizer = torch.optim.AdamW([{"params": decay_params, "weight_decay": 0.01},
                               {"params": other_params, "weight_decay": 0.0}], lr=1e-3)
scaler = torch.amp.GradScaler("cpu")

X = torch.randn(128, 16)
y = torch.sin(X[:, :1]) + 0.5 * X[:, 1:2]

for step in range(4):
    idx = torch.randint(0, 128, (32,))
    with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
        pred = model(X[idx])
    loss = F.mse_loss(pred.float(), y[idx])
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    layer_norms = {n: round(p.grad.norm().item(), 4) for n, p in model.named_parameters() if p.ndim == 2}
    total = torch.nn.utils.clip_grad_norm_(decay_params + other_params, max_norm=1.0)
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)
    print(f"step {step}: loss={loss.item():.4f}  grad norm before clip={total:.3f}  per-layer={layer_norms}")
