"""Case 832 - GradScaler used in the documented order with gradient clipping

Source: pytorch/pytorch test/test_cuda.py, test_grad_scaling_clipping_separate_unscale (scale -> backward -> unscale_ -> clip -> step -> update)
Category: correct

Reported symptom:
    none - the script trains for a few steps and exits normally.

Root cause:
    none - fp32 parameters, bf16 autocast, scaler.scale(loss).backward(), one
    unscale_ per iteration before clipping, then step() and update().

Ground truth a good tool should report:
    Nothing.
EXPECT: no findings
"""
import torch
import torch.nn as nn

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(16, 64), nn.GELU(), nn.Linear(64, 4))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
scaler = torch.amp.GradScaler("cpu")
x = torch.randn(32, 16)
y = torch.randint(0, 4, (32,))

for step in range(4):
    opt.zero_grad(set_to_none=True)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        logits = model(x)
    loss = nn.functional.cross_entropy(logits.float(), y)
    scaler.scale(loss).backward()
    scaler.unscale_(opt)
    norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    scaler.step(opt)
    scaler.update()
    print(f"step {step} loss {loss.item():.4f} grad-norm {norm.item():.4f} scale {scaler.get_scale()}")
