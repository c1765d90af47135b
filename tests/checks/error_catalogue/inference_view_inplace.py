"""A view was created in inference mode and is being modified inplace in normal mode."""

import torch

layer = torch.nn.Linear(3, 3)
hidden = layer(torch.randn(4, 3))
with torch.inference_mode():
    first = hidden[:2]
first.mul_(2)  # <- CAUSE
