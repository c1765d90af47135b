"""Case 643 - gradcheck of a correct op run on float32 inputs

Source: pytorch/pytorch test/test_autograd.py, test_gradcheck_validates_inputs (assertWarnsRegex "Input #0 requires gradient and is not a double precision")
Category: gradcheck

Reported symptom:
    torch.autograd.gradcheck.GradcheckError: Jacobian mismatch for output 0 with respect to input 0,
    (preceded by UserWarning: Input #0 requires gradient and is not a double precision floating point or complex. This check will likely fail if all the inputs are not of double precision floating point or complex.)

Root cause:
    The custom Softplus is correct, but the test input is float32. gradcheck
    estimates the Jacobian with finite differences (eps=1e-6), which float32 cannot
    resolve, so the numerical Jacobian is noise and the comparison fails; torch
    warns that the input is not double precision.

Ground truth a good tool should report:
    The input creation line: gradcheck inputs must be float64
    (dtype=torch.float64). The backward is fine; the failure is raised by the
    gradcheck call.
"""
import torch
from torch.autograd import gradcheck

torch.manual_seed(0)


class Softplus(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.log1p(torch.exp(x))

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * torch.sigmoid(x)


x = torch.randn(6, requires_grad=True)  # <- CAUSE: float32
gradcheck(Softplus.apply, (x,))  # <- ERROR
print("Softplus backward verified")
