"""Case 700 - setup_context-style Function returns its input as-is and saves it

Source: pytorch/pytorch test/functorch/test_eager_transforms.py, TestAutogradFunction.test_function_returns_input (assertRaisesRegex 'An input that has been returned as-is')
Category: custom autograd.Function (setup_context style)

Reported symptom:
    RuntimeError: An input that has been returned as-is as output is being saved for backward. This is not supported if you override setup_context. You should return and save a view of the input instead, e.g. with x.view_as(x) or setup ctx inside the forward function itself.

Root cause:
    ClampGrad is an identity in the forward (it only clips gradients in the
    backward) and returns its input unchanged. Its setup_context saves the
    input for backward. For Functions written in the forward/setup_context
    style, saving a tensor that was returned as-is is not supported.

Ground truth a good tool should report:
    `return x` in ClampGrad.forward (CAUSE) returns the input itself while
    setup_context saves it; return `x.view_as(x)`. Raised at the apply call
    (ERROR).
"""
import torch
import torch.nn as nn

torch.manual_seed(0)


class ClampGrad(torch.autograd.Function):
    @staticmethod
    def forward(x, limit):
        return x  # <- CAUSE

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, limit = inputs
        ctx.save_for_backward(x)
        ctx.limit = limit

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out.clamp(-ctx.limit, ctx.limit) * (x.abs() < 10), None


class RNNCell(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.inp = nn.Linear(dim, dim)
        self.rec = nn.Linear(dim, dim)

    def forward(self, x, h):
        h = torch.tanh(self.inp(x) + self.rec(h))
        return ClampGrad.apply(h, 1.0)  # <- ERROR


cell = RNNCell(8)
opt = torch.optim.SGD(cell.parameters(), lr=0.05)
seq = torch.randn(6, 4, 8)
h = torch.zeros(4, 8)
for t in range(seq.shape[0]):
    h = cell(seq[t], h)
loss = h.pow(2).mean()
loss.backward()
opt.step()
print("loss", loss.item())
