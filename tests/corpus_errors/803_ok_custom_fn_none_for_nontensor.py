"""Case 803 - custom Function with a Python-scalar argument returns None for it

Source: pytorch/pytorch test/test_autograd.py, test_function / test_custom_function_non_tensor_inputs_outputs (backward returns one entry per forward input, None for non-tensors)
Category: correct

Reported symptom:
    none: the script runs to completion without error or warning.

Root cause:
    No bug. ScaledMul.forward takes (x, scale, w) and backward returns exactly three
    values with the right shapes: grad for x, None for the float `scale`, and the
    batch-reduced grad for the broadcast weight w. gradcheck in float64 confirms the
    derivative before the function is used for training.

Ground truth a good tool should report:
    Nothing.

EXPECT: no findings
"""
import torch
from torch import nn
from torch.autograd import gradcheck

torch.manual_seed(0)


class ScaledMul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale, w):
        ctx.save_for_backward(x, w)
        ctx.scale = scale
        return x * w * scale

    @staticmethod
    def backward(ctx, grad_out):
        x, w = ctx.saved_tensors
        grad_x = grad_out * w * ctx.scale
        grad_w = (grad_out * x * ctx.scale).sum(dim=0)
        return grad_x, None, grad_w


xd = torch.randn(4, 3, dtype=torch.float64, requires_grad=True)
wd = torch.randn(3, dtype=torch.float64, requires_grad=True)
assert gradcheck(lambda a, b: ScaledMul.apply(a, 0.5, b), (xd, wd))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(5, 3)
        self.w = nn.Parameter(torch.ones(3))
        self.out = nn.Linear(3, 1)

    def forward(self, x):
        return self.out(ScaledMul.apply(self.fc(x), 0.5, self.w))


net = Net()
opt = torch.optim.SGD(net.parameters(), lr=0.05)
x, y = torch.randn(16, 5), torch.randn(16, 1)
for step in range(3):
    loss = nn.functional.mse_loss(net(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.4f}")
