"""Case 697 - vmap over a model that uses an old-style custom autograd.Function

Source: pytorch/pytorch test/functorch/test_eager_transforms.py, TestAutogradFunctionVmapAPI.test_no_vmap_staticmethod_and_no_generate_vmap_rule (custom Function without functorch support)
Category: torch.func transforms + custom autograd.Function

Reported symptom:
    RuntimeError: In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, jacrev, ...), it must override the setup_context staticmethod. For more details, please see https://pytorch.org/docs/main/notes/extending.func.html

Root cause:
    The model's activation is implemented as a custom autograd.Function whose
    forward takes `ctx` and saves tensors itself (the pre-2.0 style). To be
    usable under torch.func transforms a Function must separate forward from
    setup_context (and provide a vmap rule); the old-style definition is
    rejected as soon as vmap reaches it.

Ground truth a good tool should report:
    The `def forward(ctx, x)` of ShiftedSoftplus (CAUSE) uses the ctx-in-forward
    style; split it into forward(x) + setup_context and set
    generate_vmap_rule=True. Raised at the apply call (ERROR) under vmap.
"""
import torch
import torch.nn as nn
from torch.func import vmap

torch.manual_seed(0)


class ShiftedSoftplus(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):  # <- CAUSE
        ctx.save_for_backward(x)
        return nn.functional.softplus(x) - 0.6931

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * torch.sigmoid(x)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 8)
        self.fc2 = nn.Linear(8, 1)

    def forward(self, x):
        return self.fc2(ShiftedSoftplus.apply(self.fc1(x)))  # <- ERROR


net = Net()
ensemble_inputs = torch.randn(4, 10, 3)
out = vmap(net)(ensemble_inputs)
print("out", out.shape)
