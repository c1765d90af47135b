"""Case 901 - frozen backbone kept in the optimizer (correct)

Source: https://github.com/pytorch/tutorials/pull/1455
        "Notice although we register all the parameters in the optimizer, the only parameters that are computing gradients (and hence updated in gradient descent) are the weights and bias of the classifier."
Category: correct (invariant 1)
EXPECT: no findings

Reported symptom:
    None. Transfer learning as in the PyTorch tutorial: the backbone is frozen with
    requires_grad=False but all parameters are still handed to the optimizer.

Root cause:
    None. Frozen parameters never get a .grad (zero_grad sets grads to None), so
    SGD with momentum and weight decay skips them; only the new classifier moves.
    The backbone has no BatchNorm, so train() mode changes nothing for it.

Ground truth a good tool should report:
    Nothing. Deliberately frozen parameters kept in the optimizer are not a bug.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

backbone = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU())
for p in backbone.parameters():
    p.requires_grad = False
model = nn.Sequential(backbone, nn.Linear(32, 4))

optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)

x = torch.randn(512, 16)
y = (x[:, :4] + 0.2 * torch.randn(512, 4)).argmax(1)
frozen_before = backbone[0].weight.detach().clone()

for step in range(30):
    idx = torch.randint(0, 512, (64,))
    loss = F.cross_entropy(model(x[idx]), y[idx])
    if step == 0:
        first = loss.item()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

assert torch.equal(backbone[0].weight, frozen_before)
print(f"loss {first:.4f} -> {loss.item():.4f}")
