"""Case 839 - gradcheck of a deterministic custom op and autograd.functional on scalar/vector functions

Source: pytorch/pytorch test/test_autograd.py, test_gradcheck_nondeterministic / test_vjp_err_check / test_jacobian_err_check_strict / test_hessian_err_check (the accepted variants)
Category: correct

Reported symptom:
    none - gradcheck passes and the Jacobian/Hessian/vjp are computed.

Root cause:
    none - the custom Function's backward is deterministic and checked in
    float64; vjp gets an explicit v for a vector output; jacobian(strict=True)
    is applied to a function written with torch ops; hessian gets a scalar
    (mean-reduced) loss.

Ground truth a good tool should report:
    Nothing.
EXPECT: no findings
"""
import torch
import torch.nn.functional as F
from torch.autograd.functional import hessian, jacobian, vjp

torch.manual_seed(0)


class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x * w

    @staticmethod
    def backward(ctx, grad_out):
        x, w = ctx.saved_tensors
        return grad_out * w, (grad_out * x).sum(0)


x = torch.randn(4, 3, dtype=torch.double, requires_grad=True)
w = torch.randn(3, dtype=torch.double, requires_grad=True)
print("gradcheck:", torch.autograd.gradcheck(Scale.apply, (x, w), eps=1e-6, atol=1e-4))

W = torch.randn(4, 4)


def dynamics(state):
    return torch.tanh(W @ state / 2.0) * 2.0 + 0.1 * state


state = torch.randn(4)
J = jacobian(dynamics, state, strict=True)
_, sens = vjp(dynamics, state, v=torch.ones(4))
print("jacobian", tuple(J.shape), "vjp", tuple(sens.shape))

X = torch.randn(64, 3)
y = (X @ torch.tensor([1.5, -2.0, 0.5]) > 0).float()


def loss_fn(weights):
    return F.binary_cross_entropy_with_logits(X @ weights, y)


wv = torch.zeros(3)
for it in range(3):
    w_req = wv.clone().requires_grad_()
    (g,) = torch.autograd.grad(loss_fn(w_req), w_req)
    H = hessian(loss_fn, wv)
    wv = wv - torch.linalg.solve(H + 1e-3 * torch.eye(3), g)
    print("newton iter", it, "loss", round(loss_fn(wv).item(), 4))
