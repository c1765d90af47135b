"""Case 836 - custom autograd Functions that return views, mark inputs dirty and work under torch.func

Source: pytorch/pytorch test/test_autograd.py, test_autograd_inplace_views_python / test_autograd_simple_views_python and test/functorch/test_eager_transforms.py, TestAutogradFunction.test_function_returns_input
Category: correct

Reported symptom:
    none - the script trains for a few steps, takes a torch.func.grad and exits normally.

Root cause:
    none - Crop clones the slice it returns so the caller may modify it in
    place; ClampInplace marks its (non-view) input dirty and returns that same
    tensor as its only output; ClampGrad (setup_context style) returns
    x.view_as(x) instead of the input itself and sets generate_vmap_rule.

Ground truth a good tool should report:
    Nothing.
EXPECT: no findings
"""
import torch
import torch.nn as nn
from torch.func import grad

torch.manual_seed(0)


class Crop(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, size):
        ctx.in_shape = x.shape
        ctx.size = size
        return x[:, :, :size, :size].clone()

    @staticmethod
    def backward(ctx, grad_out):
        grad_in = grad_out.new_zeros(ctx.in_shape)
        grad_in[:, :, : ctx.size, : ctx.size] = grad_out
        return grad_in, None


class ClampInplace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, lo, hi):
        mask = (x >= lo) & (x <= hi)
        x.clamp_(lo, hi)
        ctx.mark_dirty(x)
        ctx.save_for_backward(mask)
        return x

    @staticmethod
    def backward(ctx, grad_out):
        (mask,) = ctx.saved_tensors
        return grad_out * mask, None, None


class ClampGrad(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x, limit):
        return x.view_as(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.limit = inputs[1]

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out.clamp(-ctx.limit, ctx.limit), None


class PatchNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bias = nn.Parameter(torch.zeros(1, 4, 1, 1))
        self.head = nn.Linear(4, 2)

    def forward(self, img):
        patch = Crop.apply(self.conv(img), 4)
        patch += self.bias
        h = ClampInplace.apply(patch.mean((2, 3)), -1.0, 1.0)
        return self.head(ClampGrad.apply(h, 0.5))


net = PatchNet()
opt = torch.optim.SGD(net.parameters(), lr=0.1)
img = torch.randn(4, 3, 8, 8)
target = torch.tensor([0, 1, 1, 0])
for step in range(3):
    opt.zero_grad()
    loss = nn.functional.cross_entropy(net(img), target)
    loss.backward()
    opt.step()
    print("step", step, round(loss.item(), 4))

g = grad(lambda t: (ClampGrad.apply(t, 0.1) ** 2).sum())(torch.randn(5))
print("clamped grad", g)
