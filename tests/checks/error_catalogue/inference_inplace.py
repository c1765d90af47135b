"""Inplace update to inference tensor outside InferenceMode is not allowed."""

import torch

with torch.inference_mode():
    total = torch.zeros(3)
total.add_(1)  # <- CAUSE
