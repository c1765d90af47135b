"""Case 603 - WGAN-GP gradient penalty with a grad_outputs of the wrong shape (losses module)

Source: pytorch/pytorch test/test_autograd.py, test_grad (the "Mismatch in shape: grad_output[0] has a shape of" check)
Category: backward-arguments

Reported symptom:
    RuntimeError: Mismatch in shape: grad_output[0] has a shape of torch.Size([16]) and output[0] has a shape of torch.Size([16, 1]).

Root cause:
    gradient_penalty passes grad_outputs=torch.ones(batch) to torch.autograd.grad,
    but the critic returns scores of shape [batch, 1]. autograd.grad requires each
    grad_output to have exactly the shape of its output (no broadcasting), so the
    call is refused before any gradient is computed.

Ground truth a good tool should report:
    The grad_outputs line in gradient_penalty (torch.ones(b)) must match the critic
    output, e.g. torch.ones_like(scores). The exception is raised by the
    torch.autograd.grad call on the next line.
"""
import torch


def critic_loss(critic, real, fake):
    return critic(fake).mean() - critic(real).mean()


def gradient_penalty(critic, real, fake):
    b = real.size(0)
    eps = torch.rand(b, 1)
    interp = (eps * real + (1 - eps) * fake).requires_grad_(True)
    scores = critic(interp)
    ones = torch.ones(b)  # <- CAUSE: critic scores are [b, 1]
    (grads,) = torch.autograd.grad(scores, interp, grad_outputs=ones, create_graph=True)  # <- ERROR
    return ((grads.norm(2, dim=1) - 1) ** 2).mean()
