"""Cannot use both regular backward hooks and full backward hooks on a single Module."""

import torch

layer = torch.nn.Linear(3, 3)
layer.register_backward_hook(lambda m, gi, go: None)  # <- CAUSE
layer.register_full_backward_hook(lambda m, gi, go: None)  # <- ERROR
