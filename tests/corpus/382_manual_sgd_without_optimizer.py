"""Plain gradient descent written by hand: update under no_grad, then reset the gradients
(correct)."""

import torch

torch.manual_seed(0)
w = torch.randn(5, 1, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
x = torch.randn(64, 5)
y = x @ torch.tensor([[1.0], [-2.0], [0.5], [0.0], [3.0]]) + 0.1
for step in range(20):
    loss = ((x @ w + b - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
        b -= 0.1 * b.grad
        w.grad.zero_()
        b.grad.zero_()
print(float(loss))
