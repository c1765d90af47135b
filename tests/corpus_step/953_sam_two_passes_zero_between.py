"""Case 953 - SAM's two backward passes with the gradients cleared in between (correct)

Source: https://github.com/rollovd/LookSAM/issues/3
        (the fix asked for there: a zero_grad() before the second backward)
Category: correct (invariant 3)
EXPECT: no findings

Reported symptom:
    None. Sharpness-aware minimisation written out in the loop: the first
    gradient builds the perturbation, the second is applied by the base
    optimizer.

Root cause:
    None. The first gradient is read to perturb the weights, then cleared
    with optimizer.zero_grad(); the second backward fills fresh gradients
    and the base optimizer steps on those alone. The loop clears gradients at
    the end of each iteration rather than at the start.

Ground truth a good tool should report:
    Nothing. Two backward calls per step, with a reset between them, are what
    SAM is.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

x = torch.randn(512, 10)
y = (x[:, :3].sum(1) > 0).long()
model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
rho = 0.05

for it in range(20):
    idx = torch.randint(0, 512, (64,))
    F.cross_entropy(model(x[idx]), y[idx]).backward()
    params = [p for p in model.parameters() if p.grad is not None]
    with torch.no_grad():
        norm = torch.norm(torch.stack([p.grad.norm() for p in params]))
        eps = [rho * p.grad / (norm + 1e-12) for p in params]
        for p, e in zip(params, eps):
            p.add_(e)
    optimizer.zero_grad()

    loss = F.cross_entropy(model(x[idx]), y[idx])
    loss.backward()
    with torch.no_grad():
        for p, e in zip(params, eps):
            p.sub_(e)
    optimizer.step()
    optimizer.zero_grad()

print(f"final loss {loss.item():.4f}")
