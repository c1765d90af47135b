"""`inputs` argument to `backward()` cannot be empty."""

import torch

model = torch.nn.Linear(3, 1)
trainable = [p for p in model.parameters() if not p.requires_grad]  # <- CAUSE
loss = model(torch.randn(4, 3)).sum()
loss.backward(inputs=trainable)  # <- ERROR
