"""Case 601 - custom Function backward returns a batch-reduced gradient

Source: pytorch/pytorch test/test_autograd.py, test_invalid_gradients (assertRaisesRegex "expected shape")
Category: custom-function

Reported symptom:
    RuntimeError: Function ScaledSoftsignBackward returned an invalid gradient at index 0 - got [8] but expected shape compatible with [4, 8]

Root cause:
    The hand-written backward of ScaledSoftsign sums the gradient over the batch
    dimension before returning it, so it hands back a [8] tensor for an input of
    shape [4, 8]. The engine checks every gradient a custom Function returns against
    the metadata of the matching forward input and refuses one that cannot be
    broadcast back to it.

Ground truth a good tool should report:
    The `return` of ScaledSoftsign.backward (the `.sum(dim=0)` line) produces a
    gradient of the wrong shape for input 0 (`x`); it must return
    `grad_out * local` with the shape of `x`. The error surfaces at loss.backward().
"""
import torch
from torch import nn

torch.manual_seed(0)


class ScaledSoftsign(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.save_for_backward(x)
        ctx.scale = scale
        return x / (1 + x.abs()) * scale

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        local = ctx.scale / (1 + x.abs()) ** 2
        return (grad_out * local).sum(dim=0), None  # <- CAUSE: reduces over the batch


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 8)
        self.fc2 = nn.Linear(8, 1)

    def forward(self, x):
        h = ScaledSoftsign.apply(self.fc1(x), 2.0)
        return self.fc2(h)


model = Net()
opt = torch.optim.SGD(model.parameters(), lr=0.05)
x = torch.randn(4, 6)
y = torch.randn(4, 1)

for step in range(3):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()  # <- ERROR
    opt.step()
    print(f"step {step} loss {loss.item():.4f}")
