"""forward pre-hook must return None or a tuple of (new_args, new_kwargs), but got"""

import torch


def add_noise(module, args, kwargs):
    return args[0] + 0.1 * torch.randn_like(args[0])  # <- CAUSE


layer = torch.nn.Linear(3, 3)
layer.register_forward_pre_hook(add_noise, with_kwargs=True)
out = layer(torch.randn(2, 3))  # <- ERROR
