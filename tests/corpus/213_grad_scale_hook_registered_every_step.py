"""Case 213 - "smaller learning rate for the backbone" via a gradient hook that is
registered again at every forward: the scale compounds and the backbone freezes

Source: composite of common forum reports (a gradient hook that seems to act more
        and more strongly, because it is registered on the parameters inside
        forward() or the training loop without keeping or removing the handle); the guard against double registration
        in https://github.com/hpcaitech/ColossalAI/pull/292 (`if p.requires_grad and
        not hasattr(p, ...)` before p.register_hook) exists for the same pitfall.
Category: hook-misuse (silent: hook accumulates)

Symptom (as reproduced here):
    No error.  The backbone learns during the first iterations, then its gradients
    shrink by 10x per iteration and it stops changing; the head keeps training.

Root cause:
    Tensor.register_hook on a *parameter* (a leaf that lives across iterations) adds
    one more hook every call and never removes the previous ones.  Registering it in
    forward() means that after k forward passes the backbone gradient is multiplied
    by 0.1**k instead of 0.1.

Ground truth a good tool should report:
    backbone.* parameters carry k grad hooks after k forward passes, all registered
    at the `p.register_hook(...)` line inside Classifier.forward; the gradient that
    reaches the optimizer is scaled by backbone_grad_scale**k.  Fix: register once
    in __init__ (or keep the handle and remove it), or use an optimizer param group
    with a smaller lr.
    EXPECT: kind=hook_registered_repeatedly; params=backbone.*; cause_line=55; read_line=74

Observed (torch 2.13, CPU):
    exit code: 0
    stdout:
        step 0: loss=1.3709  backbone grad norm=1.64e-02  head grad norm=1.69e-01
        step 1: loss=1.3693  backbone grad norm=1.64e-03  head grad norm=1.67e-01
        step 2: loss=1.3666  backbone grad norm=1.64e-04  head grad norm=1.64e-01
        step 3: loss=1.3628  backbone grad norm=1.64e-05  head grad norm=1.59e-01
        step 4: loss=1.3583  backbone grad norm=1.65e-06  head grad norm=1.53e-01
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Classifier(nn.Module):
    def __init__(self, backbone_grad_scale=0.1):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU())
        self.head = nn.Linear(64, 4)
        self.backbone_grad_scale = backbone_grad_scale

    def forward(self, x):
        if self.training:
            for p in self.backbone.parameters():
                p.register_hook(lambda g: g * self.backbone_grad_scale)  # <- CAUSE: one more hook per forward
        return self.head(self.backbone(x))


def grad_norm(params):
    return torch.cat([p.grad.reshape(-1) for p in params]).norm().item()


def train(steps=5):
    model = Classifier()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    x, y = torch.randn(64, 20), torch.randint(0, 4, (64,))
    for step in range(steps):
        model.train()
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        print(f"step {step}: loss={loss.item():.4f}  backbone grad norm={grad_norm(model.backbone.parameters()):.2e}"
              f"  head grad norm={grad_norm(model.head.parameters()):.2e}")
        optimizer.step()  # <- READ


train()
