"""Case 613 - distillation: turning off requires_grad on the teacher's output tensor

Source: pytorch/pytorch test/test_autograd.py, test_requires_grad_ (assertRaises RuntimeError for z.requires_grad_(False) on a non-leaf)
Category: requires-grad

Reported symptom:
    RuntimeError: you can only change requires_grad flags of leaf variables. If you want to use a computed variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach().

Root cause:
    The teacher is not frozen, so its logits are the output of a graph (a non-leaf).
    To stop gradients flowing into the teacher the script calls
    teacher_logits.requires_grad_(False), but the requires_grad flag can only be
    changed on leaf tensors.

Ground truth a good tool should report:
    The `teacher_logits.requires_grad_(False)` line: use
    `teacher_logits = teacher_logits.detach()` (or run the teacher under no_grad).
"""
import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(0)

teacher = nn.Sequential(nn.Linear(10, 64), nn.ReLU(), nn.Linear(64, 5))
student = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 5))
opt = torch.optim.Adam(student.parameters(), lr=1e-3)
T = 2.0

for step in range(3):
    x = torch.randn(32, 10)
    teacher_logits = teacher(x)
    teacher_logits.requires_grad_(False)  # <- CAUSE,ERROR
    student_logits = student(x)
    loss = F.kl_div(
        F.log_softmax(student_logits / T, dim=1), F.softmax(teacher_logits / T, dim=1), reduction="batchmean"
    ) * T * T
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} kd loss {loss.item():.4f}")
