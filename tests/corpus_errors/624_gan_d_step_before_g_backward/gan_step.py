"""Case 624 - generator loss reuses a discriminator output computed before optD.step() (step module)

Source: pytorch/pytorch test/test_autograd.py, test_no_grad_modifies_version / test_inplace (saved tensors modified in-place before backward)
Category: version-counter

Reported symptom:
    RuntimeError: one of the variables needed for gradient computation has been modified by an inplace operation: [torch.FloatTensor [32, 1]], which is output 0 of AsStrided, is at version 2; expected version 1 instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).

Root cause:
    gan_step scores the fakes with D once (`d_fake`), uses that for the
    discriminator loss, steps optD (which updates D's weights in-place), and then
    builds the generator loss from the same `d_fake`. Backpropagating the generator
    loss walks through D's graph, which saved D's weights at their pre-step version.

Ground truth a good tool should report:
    The `loss_g = ...(d_fake, ...)` line must re-score the fakes with the updated
    discriminator (D(fake)) instead of reusing d_fake; the modification is optD.step().
    The error is raised at loss_g.backward().
"""
import torch
import torch.nn.functional as F


def gan_step(G, D, opt_g, opt_d, real, z):
    fake = G(z)
    d_real = D(real)
    d_fake = D(fake)
    ones, zeros = torch.ones_like(d_real), torch.zeros_like(d_real)

    loss_d = F.binary_cross_entropy_with_logits(d_real, ones) + F.binary_cross_entropy_with_logits(d_fake, zeros)
    opt_d.zero_grad()
    loss_d.backward(retain_graph=True)
    opt_d.step()

    loss_g = F.binary_cross_entropy_with_logits(d_fake, ones)  # <- CAUSE: stale D output
    opt_g.zero_grad()
    loss_g.backward()  # <- ERROR
    opt_g.step()
    return loss_d.item(), loss_g.item()
