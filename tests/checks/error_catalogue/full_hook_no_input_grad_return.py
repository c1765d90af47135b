"""Backward hook for Modules where no input requires gradient should always return None or None for all gradients."""

import torch


def scale_grads(module, grad_input, grad_output):
    return tuple(g * 0.5 if g is not None else grad_output[0] for g in grad_input)  # <- CAUSE


first = torch.nn.Linear(3, 4)
first.register_full_backward_hook(scale_grads)
first(torch.randn(2, 3)).sum().backward()  # <- ERROR
