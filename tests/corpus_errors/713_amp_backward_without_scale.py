"""Case 713 - scaler.step() after an unscaled loss.backward()

Source: pytorch/pytorch test/test_cuda.py, test_grad_scaling_autocast (documented order scaler.scale(loss).backward() -> scaler.step -> scaler.update); GradScaler.step asserts when scale() was never called
Category: torch.amp.GradScaler

Reported symptom:
    AssertionError: Attempted step but _scale is None.  This may indicate your script did not use scaler.scale(loss or outputs) earlier in the iteration.

Root cause:
    When converting a training loop to AMP the user replaced optimizer.step()
    by scaler.step(opt) and added scaler.update(), but kept the plain
    `loss.backward()`. GradScaler never saw scale(), has no scale tensor, and
    its step() asserts.

Ground truth a good tool should report:
    `loss.backward()` (CAUSE) must be `scaler.scale(loss).backward()`; raised
    at scaler.step (ERROR).
"""
import torch
import torch.nn as nn

torch.manual_seed(0)

model = nn.Sequential(nn.Conv1d(3, 8, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(8 * 20, 2))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
scaler = torch.amp.GradScaler("cpu")
x = torch.randn(10, 3, 20)
y = torch.randint(0, 2, (10,))

for step in range(2):
    opt.zero_grad()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = nn.functional.cross_entropy(model(x).float(), y)
    loss.backward()  # <- CAUSE
    scaler.step(opt)  # <- ERROR
    scaler.update()
    print("step", step, loss.item())
