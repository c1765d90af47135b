"""Correct 305 - distillation with exact-zero soft targets (kl_div, xlogy) and clamp(min=eps).log()

Category: correct (numerics: log of probabilities that can be 0)
What it is:
    A student is distilled from a teacher whose retired classes are masked to probability
    exactly 0 and mixed with one-hot labels (more exact zeros).  The KD term is
    F.kl_div(log_softmax(student), soft_targets), which uses xlogy for target * log(target);
    the teacher entropy (no grad) uses torch.xlogy; the student's extra in-domain head uses
    a hand-written BCE on sigmoid probabilities with clamp(min=eps).log().
Why a naive tool might flag it:
    log of tensors that contain exact zeros and 0 * log 0 terms; every such term is either
    xlogy (defined as 0), on a tensor without grad, or clamped away from 0 before the log.
Ground truth a good tool should report:
    EXPECT: no findings (correct training code: kl_div/xlogy with zero targets, clamped log)

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        step 0: kd 0.4609, bce 0.6207
        step 1: kd 0.4579, bce 0.6191
        step 2: kd 0.4549, bce 0.6174
        step 3: kd 0.4520, bce 0.6157
        step 4: kd 0.4491, bce 0.6141
        teacher entropy 1.6638; grads finite: True
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
n_classes, eps = 8, 1e-6

teacher = nn.Sequential(nn.Linear(12, 48), nn.ReLU(), nn.Linear(48, n_classes))
student = nn.Sequential(nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, n_classes + 1))  # + an "in-domain" logit
opt = torch.optim.Adam(student.parameters(), lr=1e-3)

x = torch.randn(20, 12)
labels = torch.randint(0, n_classes, (20,))
in_domain = (torch.rand(20) > 0.2).float()
allowed = torch.ones(n_classes, dtype=torch.bool)
allowed[[2, 5]] = False  # classes retired from the label set

with torch.no_grad():
    t_logits = teacher(x).masked_fill(~allowed, float("-inf"))
    t_prob = t_logits.softmax(-1)  # exact zeros at the retired classes
    soft_targets = 0.7 * t_prob + 0.3 * F.one_hot(labels, n_classes)  # one-hot: more exact zeros
    teacher_entropy = -torch.xlogy(soft_targets, soft_targets).sum(-1).mean()  # 0 * log 0 taken as 0

for step in range(5):
    out = student(x)
    log_q = F.log_softmax(out[:, :n_classes], dim=-1)
    kd = F.kl_div(log_q, soft_targets, reduction="batchmean")  # target * (log target - log_q), xlogy inside
    p_in = torch.sigmoid(out[:, n_classes])
    bce = -(in_domain * p_in.clamp(min=eps).log()
            + (1 - in_domain) * (1 - p_in).clamp(min=eps).log()).mean()
    loss = kd + bce
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step}: kd {kd.item():.4f}, bce {bce.item():.4f}")
print(f"teacher entropy {teacher_entropy.item():.4f}; grads finite:",
      all(torch.isfinite(p.grad).all().item() for p in student.parameters()))
