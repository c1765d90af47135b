"""Case 956 - helpers that switch gradients and modes off and put them back (correct)

Source: https://docs.pytorch.org/docs/stable/generated/torch.autograd.grad_mode.set_grad_enabled.html
Category: correct (invariant 5)
EXPECT: no findings

Reported symptom:
    None. Distillation in float64 (set once at the top of the script, on
    purpose) with soft targets refreshed by a helper and a validation helper
    called every few steps.

Root cause:
    None. Every switch a helper sets is restored before it returns; the
    default dtype is set by the script itself before anything is built.

Ground truth a good tool should report:
    Nothing.
"""
import torch
import torch.nn as nn

from helpers import evaluate, refresh_targets

torch.set_default_dtype(torch.float64)
torch.manual_seed(0)

x = torch.randn(320, 12)
y = x[:, :4].argmax(1)
teacher = nn.Sequential(nn.Linear(12, 32), nn.Tanh(), nn.Linear(32, 4))
student = nn.Sequential(nn.Linear(12, 16), nn.Dropout(0.2), nn.Tanh(), nn.Linear(16, 4))
optimizer = torch.optim.Adam(student.parameters(), lr=3e-3)

student.train()
for step in range(30):
    xb = x[(step * 32) % 256:(step * 32) % 256 + 32]
    soft = refresh_targets(teacher, xb)
    loss = nn.functional.kl_div(student(xb).log_softmax(-1), soft, reduction="batchmean")
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if step % 10 == 9:
        acc = evaluate(student, x[256:], y[256:])

print(f"final loss {loss.item():.4f}  acc {acc:.3f}")
