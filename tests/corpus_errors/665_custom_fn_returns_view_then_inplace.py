"""Case 665 - output of a custom Function that is a view gets an in-place bias add

Source: pytorch/pytorch test/test_autograd.py, test_autograd_simple_views_python / test_autograd_complex_views_python (view returned from custom Function, then modified in place)
Category: custom autograd.Function + views

Reported symptom:
    RuntimeError: Output 0 of Crop is a view and is being modified inplace. This view was created inside a custom Function (or because an input was returned as-is) and the autograd logic to handle view+inplace would override the custom backward associated with the custom Function, leading to incorrect gradients. This behavior is forbidden. You can fix this by cloning the output of the custom Function.

Root cause:
    Crop.forward returns a slice (a view) of its input. Autograd marks that
    output as a view created inside a custom Function; the caller then adds a
    bias in place (`patch += ...`). Rebasing the view's history would bypass
    Crop.backward, so autograd forbids in-place ops on such outputs.

Ground truth a good tool should report:
    Crop.forward returns a view of its input (CAUSE: the `return x[...]` line,
    fix with `.clone()`), and the in-place `patch += self.bias` (CAUSE/ERROR)
    modifies it; either cloning in forward or an out-of-place add fixes it.
"""
import torch
import torch.nn as nn

torch.manual_seed(0)


class Crop(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, size):
        ctx.in_shape = x.shape
        ctx.size = size
        return x[:, :, :size, :size]  # <- CAUSE

    @staticmethod
    def backward(ctx, grad_out):
        grad_in = grad_out.new_zeros(ctx.in_shape)
        grad_in[:, :, : ctx.size, : ctx.size] = grad_out
        return grad_in, None


class PatchNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bias = nn.Parameter(torch.zeros(1, 4, 1, 1))
        self.head = nn.Linear(4, 2)

    def forward(self, img):
        feat = self.conv(img)
        patch = Crop.apply(feat, 4)
        patch += self.bias  # <- CAUSE,ERROR
        return self.head(patch.mean((2, 3)))


net = PatchNet()
opt = torch.optim.SGD(net.parameters(), lr=0.1)
img = torch.randn(2, 3, 8, 8)
target = torch.tensor([0, 1])
opt.zero_grad()
loss = nn.functional.cross_entropy(net(img), target)
loss.backward()
opt.step()
print("loss", loss.item())
