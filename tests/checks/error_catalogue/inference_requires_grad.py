"""Setting requires_grad=True on inference tensor outside InferenceMode is not allowed."""

import torch

with torch.inference_mode():
    t = torch.zeros(3)
t.requires_grad_()  # <- CAUSE
