"""Case 699 - gradient penalty through a custom op whose backward is once_differentiable

Source: pytorch/pytorch test/functorch/test_eager_transforms.py, TestAutogradFunction.test_once_differentiable_autograd_vjp (assertRaisesRegex 'marked with @once_differentiable')
Category: custom autograd.Function / double backward

Reported symptom:
    RuntimeError: trying to differentiate twice a function that was marked with @once_differentiable

Root cause:
    The smooth-abs activation is a custom Function whose backward is decorated
    with @once_differentiable. The training loss adds a gradient-norm penalty,
    computed with torch.autograd.grad(..., create_graph=True) and then
    backpropagated; that second-order backward has to differentiate the custom
    backward, which once_differentiable forbids.

Ground truth a good tool should report:
    The @once_differentiable decorator on SmoothAbs.backward (CAUSE) makes the
    op non-twice-differentiable; the penalty's backward (ERROR) needs a
    differentiable backward (write it with torch ops and drop the decorator).
"""
import torch
import torch.nn as nn
from torch.autograd.function import once_differentiable

torch.manual_seed(0)


class SmoothAbs(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.sqrt(x * x + 1e-2)

    @staticmethod
    @once_differentiable  # <- CAUSE
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * x / torch.sqrt(x * x + 1e-2)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 16)
        self.fc2 = nn.Linear(16, 1)

    def forward(self, x):
        return self.fc2(SmoothAbs.apply(self.fc1(x)))


net = Net()
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
x = torch.randn(32, 4, requires_grad=True)
y = torch.randn(32, 1)

opt.zero_grad()
pred = net(x)
mse = nn.functional.mse_loss(pred, y)
(gx,) = torch.autograd.grad(pred.sum(), x, create_graph=True)
penalty = gx.pow(2).sum(1).mean()
(mse + 0.1 * penalty).backward()  # <- ERROR
opt.step()
print("loss", mse.item(), penalty.item())
