"""Case 632 - calling an instance of a custom autograd Function instead of Function.apply

Source: pytorch/pytorch test/test_autograd.py, test_legacy_function_deprecation_exception / test_naughty_autograd_function_attribute_access (assertRaisesRegex "non-static forward method is deprecated")
Category: custom-function

Reported symptom:
    RuntimeError: Legacy autograd function with non-static forward method is deprecated. Please use new-style autograd function with static forward method. (Example: https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)

Root cause:
    Swish is a correct new-style Function (static forward/backward), but the module
    instantiates it and calls the instance, `Swish()(x)`, the way old-style
    (pre-1.3) Functions were used. Calling an instance goes through the legacy
    path, which is no longer supported, so torch raises (after a DeprecationWarning
    about instantiating it).

Ground truth a good tool should report:
    The `Swish()(x)` call in SwishMLP.forward: use `Swish.apply(x)`.
"""
import torch
from torch import nn

torch.manual_seed(0)


class Swish(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        s = torch.sigmoid(x)
        ctx.save_for_backward(x, s)
        return x * s

    @staticmethod
    def backward(ctx, grad_out):
        x, s = ctx.saved_tensors
        return grad_out * (s + x * s * (1 - s))


class SwishMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(5, 20)
        self.fc2 = nn.Linear(20, 1)

    def forward(self, x):
        return self.fc2(Swish()(self.fc1(x)))  # <- CAUSE,ERROR


model = SwishMLP()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
x, y = torch.randn(16, 5), torch.randn(16, 1)
for step in range(3):
    loss = nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.4f}")
