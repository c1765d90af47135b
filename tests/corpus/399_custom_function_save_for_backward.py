"""Clean 399 - custom autograd.Function written correctly (save_for_backward, one
gradient per forward input, None for the non-tensor argument), checked with gradcheck

What it does:
    A memory-friendly "ScaledSwish" activation f(x) = x * sigmoid(beta * x) with a
    hand-written backward that saves only the input; beta is a fixed Python float
    passed as a second forward argument.  gradcheck validates the backward in
    float64, then the activation is used in an MLP trained for a few steps.

Why it is correct (not a bug):
    forward has two inputs (x, beta) and backward returns two values
    (grad_x, None); the saved tensor is retrieved through ctx.saved_tensors and not
    modified; the input is not changed in place.  gradcheck passes.
    EXPECT: no findings

Observed (torch 2.13, CPU):
    exit code: 0
    stdout:
        gradcheck: True
        epoch 0: loss=0.6504
        epoch 1: loss=0.6045
        epoch 2: loss=0.5601
        epoch 3: loss=0.5169
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ScaledSwish(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, beta):
        ctx.save_for_backward(x)
        ctx.beta = beta
        return x * torch.sigmoid(beta * x)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        s = torch.sigmoid(ctx.beta * x)
        grad_x = grad_out * (s + ctx.beta * x * s * (1 - s))
        return grad_x, None


class SwishMLP(nn.Module):
    def __init__(self, beta=1.5):
        super().__init__()
        self.fc1, self.fc2, self.fc3 = nn.Linear(8, 32), nn.Linear(32, 32), nn.Linear(32, 1)
        self.beta = beta

    def forward(self, x):
        x = ScaledSwish.apply(self.fc1(x), self.beta)
        x = ScaledSwish.apply(self.fc2(x), self.beta)
        return self.fc3(x)


probe = torch.randn(5, 3, dtype=torch.float64, requires_grad=True)
print("gradcheck:", torch.autograd.gradcheck(lambda t: ScaledSwish.apply(t, 1.5), (probe,)))

model = SwishMLP()
optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
X = torch.randn(96, 8)
y = (X ** 2).sum(dim=1, keepdim=True) * 0.1
for epoch in range(4):
    loss = F.mse_loss(model(X), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"epoch {epoch}: loss={loss.item():.4f}")
