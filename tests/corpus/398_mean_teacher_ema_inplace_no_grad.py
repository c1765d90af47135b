"""Clean 398 - mean teacher: EMA of the student's weights updated in place under
torch.no_grad(), consistency loss against the teacher's (constant) predictions

What it does:
    Semi-supervised training: supervised CE on labelled data plus an MSE consistency
    loss between the student's and the EMA teacher's softmax on noisy unlabelled
    data.  After every optimizer step the teacher's parameters are updated in place:
    t.mul_(decay).add_(s, alpha=1 - decay), inside torch.no_grad().

Why it is correct (not a bug):
    The teacher is a deepcopy whose parameters have requires_grad=False, it is
    evaluated under no_grad, so nothing of it is saved in a graph; its in-place EMA
    update happens after the student's backward and step, and under no_grad the
    in-place ops are not recorded.  The teacher is intentionally in no optimizer.
    EXPECT: no findings

Observed (torch 2.13, CPU):
    exit code: 0
    stdout:
        step 0: supervised=1.1489  consistency=0.00106
        step 1: supervised=1.1216  consistency=0.00130
        step 2: supervised=1.1124  consistency=0.00140
        step 3: supervised=1.0968  consistency=0.00131
        step 4: supervised=1.0687  consistency=0.00115
"""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

student = nn.Sequential(nn.Linear(10, 64), nn.ReLU(), nn.Dropout(0.1), nn.Linear(64, 3))
teacher = copy.deepcopy(student)
for p in teacher.parameters():
    p.requires_grad_(False)
optimizer = torch.optim.Adam(student.parameters(), lr=1e-3)
ema_decay, consistency_weight = 0.99, 2.0

x_lab, y_lab = torch.randn(32, 10), torch.randint(0, 3, (32,))
x_unlab = torch.randn(96, 10)


@torch.no_grad()
def update_teacher(student, teacher, decay):
    for t, s in zip(teacher.parameters(), student.parameters()):
        t.mul_(decay).add_(s, alpha=1 - decay)


for step in range(5):
    student.train()
    sup = F.cross_entropy(student(x_lab), y_lab)
    noisy_s = x_unlab + 0.1 * torch.randn_like(x_unlab)
    noisy_t = x_unlab + 0.1 * torch.randn_like(x_unlab)
    with torch.no_grad():
        teacher_prob = F.softmax(teacher(noisy_t), dim=1)
    cons = F.mse_loss(F.softmax(student(noisy_s), dim=1), teacher_prob)
    loss = sup + consistency_weight * cons
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    update_teacher(student, teacher, ema_decay)
    print(f"step {step}: supervised={sup.item():.4f}  consistency={cons.item():.5f}")
