"""Correct 345 - mean teacher: EMA teacher updated in place under torch.no_grad()

Source: the mean-teacher / EMA pattern (https://github.com/CuriousAI/mean-teacher,
        update_ema_variables: ema_param.mul_(alpha).add_(param, alpha=1 - alpha))
Category: correct script (in-place parameter updates outside autograd)

What it does:
    Semi-supervised classification: a student trained on a labelled batch plus a
    consistency loss towards the teacher's predictions on an unlabelled batch.  The
    teacher is a deepcopy with requires_grad=False, its forward runs under
    torch.no_grad(), and after each optimizer step its weights are moved towards the
    student's with in-place mul_/add_ under torch.no_grad().  The in-place writes
    happen after the step, on tensors no live graph has saved.  Buffers (BatchNorm
    running stats) are copied, not averaged.

Ground truth a good tool should report:
    EXPECT: no findings

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        step 0: sup 1.2979 cons 0.0032 | teacher-student distance 0.1101
        step 5: sup 1.1635 cons 0.0103 | teacher-student distance 0.6604
        step 9: sup 1.2644 cons 0.0261 | teacher-student distance 0.9607
        teacher parameters have no grad: True
"""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

student = nn.Sequential(nn.Linear(12, 24), nn.BatchNorm1d(24), nn.ReLU(), nn.Dropout(0.1), nn.Linear(24, 3))
teacher = copy.deepcopy(student)
for p in teacher.parameters():
    p.requires_grad_(False)

optimizer = torch.optim.SGD(student.parameters(), lr=0.1, momentum=0.9)
ema_decay, cons_weight = 0.95, 1.0


@torch.no_grad()
def update_teacher(decay):
    for t, s in zip(teacher.parameters(), student.parameters()):
        t.mul_(decay).add_(s, alpha=1 - decay)
    for tb, sb in zip(teacher.buffers(), student.buffers()):
        tb.copy_(sb)


for step in range(10):
    x_lab, y_lab = torch.randn(16, 12), torch.randint(0, 3, (16,))
    x_unl = torch.randn(32, 12)

    student.train()
    teacher.train()
    sup = F.cross_entropy(student(x_lab), y_lab)
    with torch.no_grad():
        target_probs = teacher(x_unl).softmax(dim=1)
    cons = F.mse_loss(student(x_unl).softmax(dim=1), target_probs)
    loss = sup + cons_weight * cons

    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    update_teacher(ema_decay)

    if step in (0, 5, 9):
        dist = sum((t - s).pow(2).sum() for t, s in zip(teacher.parameters(), student.parameters())).sqrt()
        print(f"step {step}: sup {sup.item():.4f} cons {cons.item():.4f} | teacher-student distance {dist.item():.4f}")

print("teacher parameters have no grad:", all(p.grad is None for p in teacher.parameters()))
