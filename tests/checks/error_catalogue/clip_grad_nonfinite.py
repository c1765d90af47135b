"""The total norm of order 2.0 for gradients from `parameters` is non-finite, so it cannot be clipped."""

import torch

model = torch.nn.Linear(3, 1)
loss = model(torch.tensor([[1.0, float("inf"), 0.0]])).sum()  # <- ALSO
loss.backward()
torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0, error_if_nonfinite=True)  # <- CAUSE
