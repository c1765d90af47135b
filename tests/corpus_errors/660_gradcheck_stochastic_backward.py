"""Case 660 - gradcheck of a custom op whose backward injects noise

Source: pytorch/pytorch test/test_autograd.py, test_gradcheck_nondeterministic (assertRaisesRegex 'Backward is not reentrant')
Category: gradcheck / custom autograd.Function

Reported symptom:
    torch.autograd.gradcheck.GradcheckError: Backward is not reentrant, i.e., running backward with same input and grad_output multiple times gives different values, although analytical gradient matches numerical gradient.The tolerance for nondeterminism was 0.0.

Root cause:
    The custom Function's backward multiplies the incoming gradient by a freshly
    sampled random factor ("gradient noise" regularisation). gradcheck runs the
    backward twice with the same grad_output and requires identical results
    (nondet_tol=0 by default), so the noisy backward is rejected.

Ground truth a good tool should report:
    The backward of NoisyScale is nondeterministic: the line that scales the
    gradient by torch.rand_like(...) (CAUSE) makes two identical backward calls
    differ; gradcheck (ERROR line) detects it. Move the noise out of backward
    or pass nondet_tol to gradcheck.
"""
import torch

torch.manual_seed(0)


class NoisyScale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x * w

    @staticmethod
    def backward(ctx, grad_out):
        x, w = ctx.saved_tensors
        noise = 1.0 + 1e-4 * torch.rand_like(grad_out)  # <- CAUSE
        grad_out = grad_out * noise
        return grad_out * w, (grad_out * x).sum(0)


x = torch.randn(4, 3, dtype=torch.double, requires_grad=True)
w = torch.randn(3, dtype=torch.double, requires_grad=True)

out = NoisyScale.apply(x, w)
print("forward ok:", tuple(out.shape))

ok = torch.autograd.gradcheck(NoisyScale.apply, (x, w), eps=1e-6, atol=1e-3)  # <- ERROR
print("gradcheck passed:", ok)
