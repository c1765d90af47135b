"""Correct 321 - custom linear Function with save_for_backward and needs_input_grad, frozen first layer

Pattern: https://docs.pytorch.org/docs/stable/notes/extending.html
         ("Extending torch.autograd": save_for_backward, ctx.needs_input_grad,
         one return value per forward input, None for non-tensor arguments)
Category: correct (custom autograd.Function)

What it does:
    A hand-written linear Function `forward(ctx, x, weight, bias, scale)` (a
    float `scale` after the tensors) saves x and weight with
    ctx.save_for_backward and returns exactly four gradients, computing each
    only when ctx.needs_input_grad says it is wanted.  The data input does
    not require grad and the first layer is frozen (weight/bias
    requires_grad=False), so several of the returned gradients are None on
    purpose.  The Function is checked with torch.autograd.gradcheck in double
    precision, then a small regressor is trained and its loss goes down.

Why a naive tool might flag it:
    backward returns None for inputs, frozen parameters never get .grad, a
    Python float is passed through apply(), the first layer's input has no
    grad_fn.  All of it is intended.

Ground truth a good tool should report:
    Nothing.
    EXPECT: no findings

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        gradcheck: True
        loss 0.8207 -> 0.0668
        frozen layer grads: [None, None]
"""
import torch
import torch.nn as nn

torch.manual_seed(0)


class ScaledLinearFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, scale):
        ctx.save_for_backward(x, weight)
        ctx.scale = scale
        return scale * (x @ weight.t() + bias)

    @staticmethod
    def backward(ctx, grad_out):
        x, weight = ctx.saved_tensors
        grad_out = grad_out * ctx.scale
        grad_x = grad_w = grad_b = None
        if ctx.needs_input_grad[0]:
            grad_x = grad_out @ weight
        if ctx.needs_input_grad[1]:
            grad_w = grad_out.t() @ x
        if ctx.needs_input_grad[2]:
            grad_b = grad_out.sum(0)
        return grad_x, grad_w, grad_b, None


class ScaledLinear(nn.Module):
    def __init__(self, n_in, n_out, scale=1.0):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(n_out, n_in) * n_in ** -0.5)
        self.bias = nn.Parameter(torch.zeros(n_out))
        self.scale = scale

    def forward(self, x):
        return ScaledLinearFn.apply(x, self.weight, self.bias, self.scale)


x64 = torch.randn(5, 4, dtype=torch.double, requires_grad=True)
w64 = torch.randn(3, 4, dtype=torch.double, requires_grad=True)
b64 = torch.randn(3, dtype=torch.double, requires_grad=True)
print("gradcheck:", torch.autograd.gradcheck(ScaledLinearFn.apply, (x64, w64, b64, 0.7)))

features = ScaledLinear(8, 16)          # frozen random-feature layer
features.requires_grad_(False)
head = nn.Sequential(nn.Tanh(), ScaledLinear(16, 1, scale=0.5))
optimizer = torch.optim.Adam(head.parameters(), lr=0.03)

inputs = torch.randn(64, 8)
targets = torch.sin(inputs[:, :1]) + 0.5 * inputs[:, 1:2]
for step in range(150):
    pred = head(features(inputs))
    loss = (pred - targets).pow(2).mean()
    if step == 0:
        first = loss.item()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f"loss {first:.4f} -> {loss.item():.4f}")
print("frozen layer grads:", [p.grad for p in features.parameters()])
