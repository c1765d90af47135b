"""Clean 397 - multi-task model: two losses backpropagated separately through a shared
trunk with retain_graph=True on the first

What it does:
    A shared encoder feeds a classification head and a regression head.  The
    classification loss is backpropagated with retain_graph=True, the per-task
    gradient norm of the shared layer is logged, then the regression loss is
    backpropagated through the same graph and the two gradients accumulate before a
    single optimizer step.

Why it is correct (not a bug):
    retain_graph=True keeps the shared trunk's saved tensors for the second
    backward; the second backward is the last use, so it frees the graph.  The
    accumulation of two backward passes into .grad is intended (it equals the
    gradient of the summed loss); zero_grad() runs once per iteration before both.
    EXPECT: no findings

Observed (torch 2.13, CPU):
    exit code: 0
    stdout:
        step 0: cls=1.3983 reg=0.5378  |g_shared| cls-only=0.0662 both=0.1273
        step 1: cls=1.3938 reg=0.5282  |g_shared| cls-only=0.0653 both=0.1221
        step 2: cls=1.3856 reg=0.5123  |g_shared| cls-only=0.0637 both=0.1144
        step 3: cls=1.3747 reg=0.4942  |g_shared| cls-only=0.0617 both=0.1072
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MultiTaskNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.shared = nn.Sequential(nn.Linear(12, 48), nn.Tanh(), nn.Linear(48, 48), nn.Tanh())
        self.cls_head = nn.Linear(48, 4)
        self.reg_head = nn.Linear(48, 1)

    def forward(self, x):
        h = self.shared(x)
        return self.cls_head(h), self.reg_head(h).squeeze(1)


def train(steps=4, reg_weight=0.5):
    model = MultiTaskNet()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x = torch.randn(64, 12)
    y_cls, y_reg = torch.randint(0, 4, (64,)), torch.randn(64)
    shared_w = model.shared[0].weight
    for step in range(steps):
        logits, value = model(x)
        cls_loss = F.cross_entropy(logits, y_cls)
        reg_loss = reg_weight * F.mse_loss(value, y_reg)
        optimizer.zero_grad()
        cls_loss.backward(retain_graph=True)
        g_cls = shared_w.grad.norm().item()
        reg_loss.backward()
        g_total = shared_w.grad.norm().item()
        optimizer.step()
        print(f"step {step}: cls={cls_loss.item():.4f} reg={reg_loss.item():.4f}"
              f"  |g_shared| cls-only={g_cls:.4f} both={g_total:.4f}")


train()
