"""Case 951 - L-BFGS with a closure that clears, evaluates and backpropagates (correct)

Source: https://github.com/Lightning-AI/pytorch-lightning/pull/6147
        (zero_grad() belongs inside the closure, which L-BFGS calls many times
        per step)
Category: correct (invariant 3)
EXPECT: no findings

Reported symptom:
    None. A small regression fitted with L-BFGS, one optimizer.step(closure)
    per outer iteration.

Root cause:
    None. Each call of the closure clears the gradients before its backward,
    so every evaluation inside the step sees only its own gradient.

Ground truth a good tool should report:
    Nothing. Many backward calls per step() are how L-BFGS works.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

x = torch.linspace(-2, 2, 200).unsqueeze(1)
y = torch.sin(2 * x) + 0.05 * torch.randn_like(x)
model = nn.Sequential(nn.Linear(1, 16), nn.Tanh(), nn.Linear(16, 1))
optimizer = torch.optim.LBFGS(model.parameters(), lr=0.5, max_iter=10, history_size=10)

for outer in range(5):
    def closure():
        optimizer.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        return loss

    loss = optimizer.step(closure)

print(f"final loss {loss.item():.5f}")
