"""Correct 329 - multi-task training with per-task backward passes through a shared trunk (retain_graph=True)

Pattern: https://github.com/WeiChengTseng/Pytorch-PCGrad
         (PCGrad: one backward per task loss with retain_graph=True to get each
         task's gradient on the shared parameters, conflicting gradients
         projected, then one optimizer step)
Category: correct (retain_graph=True used legitimately)

What it does:
    A shared trunk feeds a regression head and a classification head.  Each
    step runs the forward once, then calls `loss_reg.backward(retain_graph=True)`
    and `loss_cls.backward()` separately, copying the trunk's gradient after
    each so the two task gradients can be compared.  When they conflict
    (negative dot product) the classification gradient is projected onto the
    normal plane of the regression gradient (PCGrad), the combined gradient is
    written into .grad, and only then does the optimizer step.  Nothing is
    modified in place between the two backward calls, and the last backward
    frees the graph.

Why a naive tool might flag it:
    retain_graph=True, two backward calls through the same graph, .grad
    zeroed between them and overwritten by hand before the step.

Ground truth a good tool should report:
    Nothing.
    EXPECT: no findings

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        conflicting steps projected: 12 of 40
        reg loss 3.4104 -> 0.0608, cls loss 0.7095 -> 0.2175
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TwoTaskNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(10, 48), nn.ReLU(), nn.Linear(48, 24), nn.ReLU())
        self.reg_head = nn.Linear(24, 1)
        self.cls_head = nn.Linear(24, 2)

    def forward(self, x):
        h = self.trunk(x)
        return self.reg_head(h).squeeze(-1), self.cls_head(h)


def flat_grad(params):
    return torch.cat([p.grad.reshape(-1) for p in params])


def write_grad(params, flat):
    offset = 0
    for p in params:
        n = p.numel()
        p.grad.copy_(flat[offset:offset + n].view_as(p))
        offset += n


model = TwoTaskNet()
trunk_params = list(model.trunk.parameters())
optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)

x = torch.randn(64, 10)
y_reg = x[:, :3].sum(1)
y_cls = (x[:, 3] - x[:, 0] > 0).long()
projected = 0

for step in range(40):
    pred_reg, logits = model(x)
    loss_reg = F.mse_loss(pred_reg, y_reg)
    loss_cls = F.cross_entropy(logits, y_cls)
    if step == 0:
        first = (loss_reg.item(), loss_cls.item())

    optimizer.zero_grad()
    loss_reg.backward(retain_graph=True)       # graph still needed for loss_cls
    g_reg = flat_grad(trunk_params).clone()
    for p in trunk_params:
        p.grad.zero_()
    loss_cls.backward()                        # reg_head keeps its grad, cls_head gets its own
    g_cls = flat_grad(trunk_params).clone()

    dot = torch.dot(g_reg, g_cls)
    if dot < 0:
        g_cls = g_cls - dot / g_reg.pow(2).sum() * g_reg
        projected += 1
    write_grad(trunk_params, g_reg + g_cls)
    optimizer.step()

print(f"conflicting steps projected: {projected} of 40")
print(f"reg loss {first[0]:.4f} -> {loss_reg.item():.4f}, cls loss {first[1]:.4f} -> {loss_cls.item():.4f}")
