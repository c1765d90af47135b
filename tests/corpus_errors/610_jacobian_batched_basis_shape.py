"""Case 610 - per-output Jacobian with is_grads_batched and an unbatched basis

Source: pytorch/pytorch test/test_autograd.py, test_grad_batched_grad (assertRaisesRegex "If `is_grads_batched=True`, we interpret the first")
Category: backward-arguments

Reported symptom:
    RuntimeError: If `is_grads_batched=True`, we interpret the first dimension of each grad_output as the batch dimension. The sizes of the remaining dimensions are expected to match the shape of corresponding output, but a mismatch was detected: grad_output[0] has a shape of torch.Size([]) and output[0] has a shape of torch.Size([4, 2]). If you only want some tensors in `grad_output` to be considered batched, consider using vmap.

Root cause:
    To get the Jacobian rows of a [4, 2] output in one call, the script passes
    torch.eye(2) as grad_outputs with is_grads_batched=True. The first dimension is
    taken as the vmap batch, so what remains of each grad_output ([2]) cannot match
    the [4, 2] output (the message reports the per-sample grad shape as []). The
    basis has to carry the output's full shape after the batch dimension.

Ground truth a good tool should report:
    The `basis = torch.eye(2)` line; it should be
    torch.eye(2).unsqueeze(1).expand(2, 4, 2). Raised by the torch.autograd.grad call.
"""
import torch
from torch import nn

torch.manual_seed(0)

policy = nn.Sequential(nn.Linear(3, 16), nn.Tanh(), nn.Linear(16, 2))
states = torch.randn(4, 3, requires_grad=True)
actions = policy(states)

basis = torch.eye(2)  # <- CAUSE: missing the batch-of-states dimension
(jac,) = torch.autograd.grad(actions, states, grad_outputs=basis, is_grads_batched=True)  # <- ERROR
print("d action / d state:", jac.shape)
