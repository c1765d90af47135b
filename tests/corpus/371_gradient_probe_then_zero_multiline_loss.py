"""Case 371 - correct: per-task gradient probes read and zeroed before the real backward; a loss over four lines

Source: Chen et al. 2018, "GradNorm: Gradient Normalization for Adaptive Loss
        Balancing" (task weights from per-task gradient norms on the shared
        layer); reading `.grad` after a probing backward and clearing it is the
        pattern of https://github.com/pytorch/pytorch/issues/86051 (inspecting
        parameter gradients after backward)
Category: correct code a naive tool flags (backward whose gradients are discarded,
          retain_graph, a statement spanning several lines)

What the code does:
    A shared trunk feeds a regression head and a classification head.  Each
    step, each task loss is back-propagated alone (retain_graph=True) only to
    read the gradient norm it puts on the last shared layer; the gradients are
    zeroed after each probe.  The task weights are derived from those norms
    (plain Python floats), then the weighted total loss -- one statement over
    four lines -- is back-propagated through the same retained graph and the
    optimizer steps on that gradient only.

Why a naive tool might flag it:
    `backward()` calls whose .grad is thrown away by `zero_grad()` before
    any step; two backward passes through one graph before the real one; a
    loss expression whose terms are on different lines than the statement's
    first line.

Ground truth a good tool should report:
    Nothing: the step uses exactly the gradient of the weighted loss.
    EXPECT: no findings

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        step  0 reg   90.154 cls 1.431 weights reg 0.524 cls 11.097
        step 49 reg    1.919 cls 0.014 weights reg 0.502 cls 133.919
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

trunk = nn.Sequential(nn.Linear(6, 24), nn.ReLU(), nn.Linear(24, 24), nn.ReLU())
reg_head = nn.Linear(24, 1)
cls_head = nn.Linear(24, 4)
params = list(trunk.parameters()) + list(reg_head.parameters()) + list(cls_head.parameters())
optimizer = torch.optim.Adam(params, lr=1e-2)
shared = trunk[2].weight

x = torch.randn(96, 6)
y_reg = 10.0 * x[:, :1] - 4.0 * x[:, 1:2]          # large-scale regression target
y_cls = (x[:, 2:4].sum(1) > 0).long() + 2 * (x[:, 4] > 0).long()

for step in range(50):
    h = trunk(x)
    reg_loss = F.mse_loss(reg_head(h), y_reg)
    cls_loss = F.cross_entropy(cls_head(h), y_cls)

    norms = []
    for task_loss in (reg_loss, cls_loss):
        optimizer.zero_grad()
        task_loss.backward(retain_graph=True)
        norms.append(shared.grad.norm().item())
    optimizer.zero_grad()

    mean_norm = sum(norms) / len(norms)
    w_reg, w_cls = mean_norm / norms[0], mean_norm / norms[1]
    total = (
        w_reg * reg_loss
        + w_cls * cls_loss
        + 1e-4 * sum(p.pow(2).sum() for p in trunk.parameters())
    )
    total.backward()
    optimizer.step()
    if step in (0, 49):
        print(f"step {step:2d} reg {reg_loss.item():8.3f} cls {cls_loss.item():.3f} "
              f"weights reg {w_reg:.3f} cls {w_cls:.3f}")
