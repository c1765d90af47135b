"""Case 712 - GradScaler used with a model converted to float16

Source: pytorch/pytorch test/test_cuda.py, test_grad_scaling_unscale (GradScaler refuses FP16 gradients: "Attempting to unscale FP16 gradients.")
Category: torch.amp.GradScaler

Reported symptom:
    ValueError: Attempting to unscale FP16 gradients.

Root cause:
    Instead of autocast the user calls model.half(), so the parameters and
    therefore their gradients are float16. GradScaler is designed for fp32
    master weights: it refuses to unscale fp16 gradients (which would lose
    precision/overflow), and scaler.step raises.

Ground truth a good tool should report:
    `model.half()` (CAUSE) makes the parameters fp16; keep fp32 parameters
    and use torch.autocast. Raised at scaler.step (ERROR).
"""
import torch
import torch.nn as nn

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1))
model = model.half()  # <- CAUSE
opt = torch.optim.SGD(model.parameters(), lr=0.01)
scaler = torch.amp.GradScaler("cpu")
x, y = torch.randn(16, 8).half(), torch.randn(16, 1).half()

for step in range(2):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(x).float(), y.float())
    scaler.scale(loss).backward()
    scaler.step(opt)  # <- ERROR
    scaler.update()
    print("step", step, loss.item())
