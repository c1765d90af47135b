"""Inference tensors cannot be saved for backward."""

import torch

backbone = torch.nn.Linear(3, 3)
head = torch.nn.Linear(3, 1)
x = torch.randn(4, 3)
with torch.inference_mode():  # <- CAUSE
    feats = backbone(x)  # <- CREATED
head(feats).sum().backward()  # <- ERROR
