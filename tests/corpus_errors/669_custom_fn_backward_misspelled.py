"""Case 669 - custom Function whose backward method name is misspelled

Source: pytorch/pytorch test/test_autograd.py, test_custom_function_error (assertRaisesRegex 'must implement the backward')
Category: custom autograd.Function

Reported symptom:
    NotImplementedError: You must implement either the backward or vjp method for your custom autograd.Function to use it with backward mode AD.

Root cause:
    The straight-through estimator defines `backwards` (with an s) instead of
    `backward`, so autograd falls back to the base-class backward that raises
    NotImplementedError when loss.backward() reaches the node.

Ground truth a good tool should report:
    The method named `backwards` (CAUSE) is never used by autograd; rename it
    to `backward`. The error surfaces at loss.backward() (ERROR).
"""
import torch
import torch.nn as nn

torch.manual_seed(0)


class RoundSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return torch.round(x)

    @staticmethod
    def backwards(ctx, grad_out):  # <- CAUSE
        return grad_out


class QuantLinear(nn.Linear):
    def forward(self, x):
        w_q = RoundSTE.apply(self.weight * 8) / 8  # <- CREATED
        return nn.functional.linear(x, w_q, self.bias)


model = nn.Sequential(QuantLinear(4, 8), nn.ReLU(), QuantLinear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(16, 4), torch.randn(16, 1)
opt.zero_grad()
loss = nn.functional.mse_loss(model(x), y)
loss.backward()  # <- ERROR
opt.step()
print("loss", loss.item())
