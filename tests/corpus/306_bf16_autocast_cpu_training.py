"""Correct 306 - small CNN trained under torch.autocast("cpu", dtype=torch.bfloat16)

Category: correct (numerics: reduced precision)
What it is:
    Convolutions and the classifier run in bfloat16 under CPU autocast; cross_entropy is
    autocast to float32, the parameters and their gradients stay float32 and AdamW updates
    them normally.  No GradScaler is needed for bfloat16 (same exponent range as float32).
Why a naive tool might flag it:
    bfloat16 activations, mixed dtypes in one graph and logits of lower precision than the
    loss; nothing overflows or underflows and the gradients are finite.
Ground truth a good tool should report:
    EXPECT: no findings (correct training code: CPU bf16 autocast)

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        step 0: loss 1.3939 (logits torch.bfloat16, loss torch.float32)
        step 1: loss 1.3748 (logits torch.bfloat16, loss torch.float32)
        step 2: loss 1.3569 (logits torch.bfloat16, loss torch.float32)
        step 3: loss 1.3393 (logits torch.bfloat16, loss torch.float32)
        step 4: loss 1.3224 (logits torch.bfloat16, loss torch.float32)
        step 5: loss 1.3058 (logits torch.bfloat16, loss torch.float32)
        weights float32: True | grads finite: True
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

model = nn.Sequential(
    nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
    nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
    nn.Flatten(), nn.Linear(16, 4),
)
opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=0.01)
images = torch.randn(16, 1, 12, 12)
labels = torch.randint(0, 4, (16,))

for step in range(6):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        logits = model(images)  # convs and the linear run in bfloat16
        loss = F.cross_entropy(logits, labels)  # autocast runs the loss in float32
    opt.zero_grad()
    loss.backward()  # grads land in the float32 master weights
    opt.step()
    print(f"step {step}: loss {loss.item():.4f} (logits {logits.dtype}, loss {loss.dtype})")
print("weights float32:", all(p.dtype == torch.float32 for p in model.parameters()),
      "| grads finite:", all(torch.isfinite(p.grad).all().item() for p in model.parameters()))
