"""Case 667 - in-place clamp Function marks its input dirty but returns a copy

Source: pytorch/pytorch test/test_autograd.py, test_autograd_inplace_views_python (assertRaisesRegex 'Some elements marked as dirty during the forward method were not returned as output.')
Category: custom autograd.Function + mark_dirty

Reported symptom:
    RuntimeError: Some elements marked as dirty during the forward method were not returned as output. The inputs that are modified inplace must all be outputs of the Function.

Root cause:
    ClampInplace modifies its input in place and calls ctx.mark_dirty on it,
    but then returns `x.clone()` instead of the modified input itself. Autograd
    requires every tensor marked dirty to be returned as an output so it can
    bump its history; a dirty input that is not among the outputs is an error.

Ground truth a good tool should report:
    The forward returns a clone (CAUSE: the `return x.clone()` line) of the
    tensor passed to mark_dirty; return `x` itself. Raised at the apply call
    (ERROR).
"""
import torch
import torch.nn as nn

torch.manual_seed(0)


class ClampInplace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, lo, hi):
        mask = (x >= lo) & (x <= hi)
        x.clamp_(lo, hi)
        ctx.mark_dirty(x)
        ctx.save_for_backward(mask)
        return x.clone()  # <- CAUSE

    @staticmethod
    def backward(ctx, grad_out):
        (mask,) = ctx.saved_tensors
        return grad_out * mask, None, None


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(5, 16)
        self.fc2 = nn.Linear(16, 1)

    def forward(self, x):
        h = self.fc1(x)
        h = ClampInplace.apply(h, -1.0, 1.0)  # <- ERROR
        return self.fc2(h)


net = Net()
opt = torch.optim.SGD(net.parameters(), lr=0.1)
x, y = torch.randn(10, 5), torch.randn(10, 1)
opt.zero_grad()
loss = nn.functional.mse_loss(net(x), y)
loss.backward()
opt.step()
print("loss", loss.item())
