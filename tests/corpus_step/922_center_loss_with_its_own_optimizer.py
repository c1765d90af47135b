"""Case 922 - center loss whose centres are stepped by an optimizer of their own (correct)

Source: https://github.com/jxgu1016/MNIST_center_loss_pytorch/issues/21
        "optimzer4center is to update centers (see Alg. 1 step 6 in the paper).
        optimizer4nn is the conventional optimizer for other params except centers."
Category: correct (invariant 2)
EXPECT: no findings

Reported symptom:
    None. The network and the class centres of the center loss are trained by two
    optimizers with different learning rates; the centres' gradient is rescaled
    by hand before their step, as the paper's update rule asks.

Root cause:
    None. The centres are held by optimizer4center, which steps after every
    backward; the rescaling reads their gradient inside the loop. Every gradient
    a backward produces is consumed.

Ground truth a good tool should report:
    Nothing. Keeping a learnable loss module in an optimizer of its own is a
    correct way to train it.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class CenterLoss(nn.Module):
    def __init__(self, num_classes, feat_dim):
        super().__init__()
        self.centers = nn.Parameter(torch.randn(num_classes, feat_dim))

    def forward(self, feats, labels):
        return (feats - self.centers[labels]).pow(2).sum(1).mean() / 2


net = nn.Sequential(nn.Linear(20, 32), nn.PReLU(), nn.Linear(32, 2))
fc = nn.Linear(2, 4)
center_loss = CenterLoss(4, 2)
loss_weight = 0.5
optimizer4nn = torch.optim.SGD([*net.parameters(), *fc.parameters()], lr=0.05, momentum=0.9)
optimzer4center = torch.optim.SGD(center_loss.parameters(), lr=0.5)

x = torch.randn(400, 20)
y = (x[:, :4] + 0.1 * torch.randn(400, 4)).argmax(1)
for step in range(30):
    idx = torch.randint(0, 400, (64,))
    feats = net(x[idx])
    loss = F.cross_entropy(fc(feats), y[idx]) + loss_weight * center_loss(feats, y[idx])
    optimizer4nn.zero_grad()
    optimzer4center.zero_grad()
    loss.backward()
    optimizer4nn.step()
    for p in center_loss.parameters():
        p.grad.mul_(1.0 / loss_weight)
    optimzer4center.step()

print(f"loss {loss.item():.4f}")
