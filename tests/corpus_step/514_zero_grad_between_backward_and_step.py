"""Case 514 - zero_grad() placed between the backward passes and optimizer.step()

Source: https://github.com/yuval-alaluf/hyperstyle/issues/40
        "for _iter in range(n_iter): ... loss.backward()  /  opt.zero_grad()  /  opt.step()"
Category: 3 - a step consumes exactly the gradients meant for it

Reported symptom:
    Several refinement iterations each call loss.backward() to accumulate
    gradients, then a single optimizer step is taken - but the parameters do not
    move and the loss stays where it started.

Root cause:
    opt.zero_grad() is called after the accumulation loop and right before
    opt.step(). With the default set_to_none=True it deletes every gradient that
    the backward passes produced, so each step has nothing to apply.

Ground truth a good tool should report:
    Every gradient produced by backward is discarded before any step consumes it;
    the optimizer steps with no gradients. The culprit is the `opt.zero_grad()`
    placed just before `opt.step()` (it belongs before the accumulation loop).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

n_iter = 3
images = torch.randn(256, 16)
targets = torch.tanh(images @ torch.randn(16, 16) * 0.3)

model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 16))
opt = torch.optim.Adam(model.parameters(), lr=3e-3)

for step in range(20):
    idx = torch.randint(0, 256, (32,))
    x, y = images[idx], targets[idx]
    y_hat = torch.zeros_like(y)
    for _iter in range(n_iter):
        delta = model(torch.cat([x, y_hat.detach()], dim=1))
        y_hat = y_hat.detach() + delta
        loss = F.mse_loss(y_hat, y)
        loss.backward()
    opt.zero_grad()  # <- CAUSE
    opt.step()

print(f"final loss {loss.item():.4f}")
