"""Case 710 - gradients unscaled for logging after scaler.step()

Source: pytorch/pytorch test/test_cuda.py, test_grad_scaling_clipping_separate_unscale (unscale_ must come before step); GradScaler.unscale_ raises after step()
Category: torch.amp.GradScaler

Reported symptom:
    RuntimeError: unscale_() is being called after step().

Root cause:
    The loop logs the gradient norm after the optimizer step and calls
    scaler.unscale_(opt) at that point. Once scaler.step(opt) ran for this
    iteration (it unscales internally), unscale_ is no longer allowed until
    scaler.update(); the unscale/log has to happen before step.

Ground truth a good tool should report:
    The scaler.unscale_(opt) placed after scaler.step(opt) (CAUSE/ERROR);
    move it before the step.
"""
import torch
import torch.nn as nn

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
scaler = torch.amp.GradScaler("cpu")
x, y = torch.randn(24, 10), torch.randn(24, 1)

for step in range(3):
    opt.zero_grad()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = nn.functional.mse_loss(model(x).float(), y)
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.unscale_(opt)  # <- CAUSE,ERROR
    norm = nn.utils.clip_grad_norm_(model.parameters(), float("inf"))
    scaler.update()
    print("step", step, "loss", loss.item(), "grad norm", norm.item())
