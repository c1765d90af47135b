"""Backward hook returned an invalid number of grad_input, got 2, but expected 1."""

import torch

model = torch.nn.Linear(3, 2)


def hook(module, grad_input, grad_output):
    return (grad_input[0], grad_input[0])  # <- CAUSE


model.register_full_backward_hook(hook)
x = torch.randn(4, 3, requires_grad=True)
model(x).sum().backward()  # <- ERROR
