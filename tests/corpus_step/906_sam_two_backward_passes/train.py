"""Case 906 - SAM optimizer with its two forward/backward passes (correct)

Source: https://github.com/davda54/sam/issues/8
        "you split the optimization into first and second step"
Category: correct (invariant 3)
EXPECT: no findings

Reported symptom:
    None. Sharpness-aware minimisation: one backward at w, a perturbation
    w + e(w), a second backward there, then the base optimizer steps at w.

Root cause:
    None. first_step() perturbs the weights under no_grad and clears the
    gradients; the second backward therefore holds only the gradient at
    w + e(w); second_step() restores w before the base step and clears again.
    Two backward passes per step and weights changed outside the optimizer are
    the algorithm, not a bug.

Ground truth a good tool should report:
    Nothing.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from sam import SAM

torch.manual_seed(0)

x = torch.randn(512, 10)
y = (x[:, :3].sum(1) + 0.5 * x[:, 3] * x[:, 4] > 0).long()

model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 2))
optimizer = SAM(model.parameters(), torch.optim.SGD, rho=0.05, lr=0.1, momentum=0.9)

for step in range(30):
    idx = torch.randint(0, 512, (64,))
    loss = F.cross_entropy(model(x[idx]), y[idx])
    if step == 0:
        first = loss.item()
    loss.backward()
    optimizer.first_step()
    F.cross_entropy(model(x[idx]), y[idx]).backward()
    optimizer.second_step()

print(f"loss {first:.4f} -> {loss.item():.4f}")
