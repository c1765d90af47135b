"""Case 907 - mean-teacher EMA updated under no_grad, parameters and buffers (correct)

Source: https://github.com/saltoricristiano/cosmix-uda/issues/21
        "You update only the parameters, but forget the model **buffers**."
Category: correct (invariant 4)
EXPECT: no findings

Reported symptom:
    None. Semi-supervised mean teacher: the student is trained with a supervised
    loss plus a consistency loss against an EMA teacher.

Root cause:
    None. The teacher is a deep copy with requires_grad=False, is not in the
    optimizer, produces targets under torch.no_grad(), and is updated after each
    student step by an EMA of the student's parameters and buffers inside
    torch.no_grad(). Teacher weights changing outside any optimizer is intended.

Ground truth a good tool should report:
    Nothing.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from ema import EMATeacher

torch.manual_seed(0)

x = torch.randn(600, 12)
y = (x[:, :3]).argmax(1)
labeled = torch.arange(100)

student = nn.Sequential(nn.Linear(12, 48), nn.BatchNorm1d(48), nn.ReLU(), nn.Linear(48, 3))
teacher = EMATeacher(student)
optimizer = torch.optim.Adam(student.parameters(), lr=5e-3)

for step in range(30):
    li = labeled[torch.randint(0, 100, (32,))]
    ui = torch.randint(100, 600, (64,))
    student.train()
    sup = F.cross_entropy(student(x[li]), y[li])
    noisy = x[ui] + 0.1 * torch.randn(64, 12)
    cons = F.mse_loss(torch.softmax(student(noisy), 1), teacher.predict(x[ui]))
    loss = sup + cons
    if step == 0:
        first = loss.item()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    teacher.update(student)

print(f"loss {first:.4f} -> {loss.item():.4f}")
