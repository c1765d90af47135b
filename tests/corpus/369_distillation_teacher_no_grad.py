"""Case 369 - correct: knowledge distillation, teacher evaluated under torch.no_grad()

Source: https://github.com/lenscloth/RKD/issues/16 (the teacher is "already
        forwarded in the context of torch.no_grad", only the student's
        outputs carry a graph); Hinton et al. 2015, "Distilling the Knowledge
        in a Neural Network" (soft targets at temperature T, loss scaled by T^2)
Category: correct code a naive tool flags (no_grad forward feeding a training loss)

What the code does:
    A larger teacher MLP is first trained on the task (normal loop).  Then it
    is put in eval mode, and during distillation its logits are computed
    under `torch.no_grad()`; the student is trained on
    `T^2 * KL(softmax(s/T) || softmax(t/T)) + CE(s, y)`.  Only the student's
    parameters are in the distillation optimizer.

Why a naive tool might flag it:
    A model forward inside `no_grad` whose output feeds the loss that is
    back-propagated; a model (the teacher) whose parameters get no gradient
    in the distillation phase; `requires_grad=True` parameters not in the
    optimizer.

Ground truth a good tool should report:
    Nothing: the teacher is a constant target on purpose.
    EXPECT: no findings

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        distill epoch  0 loss 5.4055
        distill epoch 59 loss 3.2629
        teacher acc 1.000  student acc 0.648
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
x = torch.randn(256, 10)
y = (x[:, 0] * x[:, 1] > 0).long() + (x[:, 2] > 0.5).long()

teacher = nn.Sequential(nn.Linear(10, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 3))
student = nn.Sequential(nn.Linear(10, 12), nn.ReLU(), nn.Linear(12, 3))

t_opt = torch.optim.Adam(teacher.parameters(), lr=1e-2)
for epoch in range(60):
    t_opt.zero_grad()
    F.cross_entropy(teacher(x), y).backward()
    t_opt.step()

teacher.eval()
s_opt = torch.optim.Adam(student.parameters(), lr=1e-2)
T, alpha = 3.0, 0.7
for epoch in range(60):
    with torch.no_grad():
        t_logits = teacher(x)
    s_logits = student(x)
    kd = F.kl_div(F.log_softmax(s_logits / T, dim=1), F.softmax(t_logits / T, dim=1),
                  reduction="batchmean") * T * T
    loss = alpha * kd + (1 - alpha) * F.cross_entropy(s_logits, y)
    s_opt.zero_grad()
    loss.backward()
    s_opt.step()
    if epoch in (0, 59):
        print(f"distill epoch {epoch:2d} loss {loss.item():.4f}")

with torch.no_grad():
    t_acc = (teacher(x).argmax(1) == y).float().mean().item()
    s_acc = (student(x).argmax(1) == y).float().mean().item()
print(f"teacher acc {t_acc:.3f}  student acc {s_acc:.3f}")
