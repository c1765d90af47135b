"""Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."""

import numpy as np
import torch

model = torch.nn.Linear(4, 2)
scores = model(torch.randn(8, 4)).softmax(dim=1)
best = np.argmax(scores.numpy(), axis=1)  # <- CAUSE
print(best)
