"""Case 714 - gradient accumulation calls scaler.step for every micro-batch but update once

Source: pytorch/pytorch test/test_cuda.py, test_grad_scaling_accumulation (accumulate with scale().backward(), then step/update once per iteration); GradScaler.step raises when called twice before update()
Category: torch.amp.GradScaler

Reported symptom:
    RuntimeError: step() has already been called since the last update().

Root cause:
    With gradient accumulation the optimizer step (and scaler.step) must run
    once per accumulated batch, followed by scaler.update(). Here scaler.step
    is inside the micro-batch loop while scaler.update() is after it, so the
    second micro-batch calls step() again before any update().

Ground truth a good tool should report:
    `scaler.step(opt)` inside the micro-batch loop (CAUSE/ERROR) must move out
    of the loop, next to scaler.update().
"""
import torch
import torch.nn as nn

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(12, 48), nn.Tanh(), nn.Linear(48, 3))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
scaler = torch.amp.GradScaler("cpu")
data = torch.randn(64, 12)
labels = torch.randint(0, 3, (64,))
accum = 4

for it in range(2):
    opt.zero_grad()
    for xb, yb in zip(data.chunk(accum), labels.chunk(accum)):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = nn.functional.cross_entropy(model(xb).float(), yb) / accum
        scaler.scale(loss).backward()
        scaler.step(opt)  # <- CAUSE,ERROR
    scaler.update()
    print("iteration", it, "scale", scaler.get_scale())
