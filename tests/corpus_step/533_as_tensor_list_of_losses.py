"""Case 533 - per-term losses gathered with torch.as_tensor(list) lose their history

Source: https://github.com/lululxvi/deepxde/pull/1318
        "It supports it, but it looses the gradient information."
Category: 8 - tensors that require grad do not leave autograd silently

Reported symptom:
    A physics-informed network with a residual term and a boundary term does not
    train: after backward, a.grad and b.grad are None. Setting requires_grad on
    the gathered tensor removed the error message but not the problem.

Root cause:
    The individual loss terms (each with a grad_fn) are collected into a list and
    turned into one tensor with torch.as_tensor(...). as_tensor copies the values
    and drops the autograd history; the result is then marked requires_grad=True,
    which makes it a fresh leaf, so backward stops right there.

Ground truth a good tool should report:
    The loss is a leaf that does not depend on the model: the per-term losses leave
    autograd at the `torch.as_tensor(terms)` line (use torch.stack); the
    following requires_grad = True only hides it. No parameter gets a gradient.
"""
import torch
import torch.nn as nn

torch.manual_seed(0)

net = nn.Sequential(nn.Linear(1, 24), nn.Tanh(), nn.Linear(24, 24), nn.Tanh(), nn.Linear(24, 1))
optimizer = torch.optim.Adam(net.parameters(), lr=5e-3)

x_col = torch.linspace(0, 1, 64)[:, None]
x_bc = torch.tensor([[0.0], [1.0]])
u_bc = torch.tensor([[0.0], [0.0]])

for step in range(30):
    x = x_col.clone().requires_grad_(True)
    u = net(x)
    du = torch.autograd.grad(u.sum(), x, create_graph=True)[0]
    d2u = torch.autograd.grad(du.sum(), x, create_graph=True)[0]
    residual = ((d2u + torch.pi ** 2 * torch.sin(torch.pi * x)) ** 2).mean()
    boundary = ((net(x_bc) - u_bc) ** 2).mean()
    terms = [residual, boundary]
    losses = torch.as_tensor(terms)  # <- CAUSE
    losses.requires_grad = True
    loss = losses.sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

print(f"first layer grad is None: {net[0].weight.grad is None}")
print(f"final loss {loss.item():.4f}")
