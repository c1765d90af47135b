"""Case 642 - gradcheck catches a wrong hand-written derivative

Source: pytorch/pytorch test/test_autograd.py, test_gradcheck_jacobian_mismatch (assertRaisesRegex "Jacobian mismatch for output 0 with respect to input 0")
Category: gradcheck

Reported symptom:
    torch.autograd.gradcheck.GradcheckError: Jacobian mismatch for output 0 with respect to input 0,

Root cause:
    LogCosh.backward returns grad * tanh(x) ** 2 instead of grad * tanh(x) (the
    derivative of log(cosh(x)) is tanh(x)). The analytical Jacobian therefore
    differs from the finite-difference one and gradcheck reports the mismatch.

Ground truth a good tool should report:
    The `return` line of LogCosh.backward (wrong derivative); gradcheck raises at
    its call.
"""
import torch
from torch.autograd import gradcheck

torch.manual_seed(0)


class LogCosh(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.log(torch.cosh(x))

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * torch.tanh(x) ** 2  # <- CAUSE


def logcosh_loss(pred, target):
    return LogCosh.apply(pred - target).mean()


pred = torch.randn(5, dtype=torch.float64, requires_grad=True)
target = torch.randn(5, dtype=torch.float64)
gradcheck(lambda p: LogCosh.apply(p - target), (pred,))  # <- ERROR
print("loss", logcosh_loss(pred, target).item())
