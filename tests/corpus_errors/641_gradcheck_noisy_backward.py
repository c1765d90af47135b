"""Case 641 - gradcheck on a custom op whose backward injects gradient noise

Source: pytorch/pytorch test/test_autograd.py, test_gradcheck_nondeterministic (assertRaisesRegex "Backward is not reentrant")
Category: gradcheck

Reported symptom:
    torch.autograd.gradcheck.GradcheckError: Backward is not reentrant, i.e., running backward with same input and grad_output multiple times gives different values, although analytical gradient matches numerical gradient.The tolerance for nondeterminism was 0.0.

Root cause:
    NoisyScale.backward multiplies the gradient by (1 + tiny random noise) as a
    "gradient noise" regulariser. gradcheck runs backward several times with the
    same input and grad_output and requires identical results; the random factor
    makes backward non-deterministic (non-reentrant), so the check fails even though
    the gradient is right on average.

Ground truth a good tool should report:
    The `return` of NoisyScale.backward (the torch.rand_like noise): make backward
    deterministic (add noise elsewhere, e.g. to the parameter update) or pass
    nondet_tol to gradcheck. Raised at the gradcheck call.
"""
import torch
from torch.autograd import gradcheck

torch.manual_seed(0)


class NoisyScale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x * w

    @staticmethod
    def backward(ctx, grad_out):
        x, w = ctx.saved_tensors
        noise = 1 + 1e-6 * torch.rand_like(grad_out)
        return grad_out * w * noise, (grad_out * x * noise).sum(0)  # <- CAUSE


x = torch.randn(4, 3, dtype=torch.float64, requires_grad=True)
w = torch.randn(3, dtype=torch.float64, requires_grad=True)
ok = gradcheck(NoisyScale.apply, (x, w))  # <- ERROR
print("gradcheck passed:", ok)
