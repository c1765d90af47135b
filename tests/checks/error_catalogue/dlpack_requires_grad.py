"""Can't export tensors that require gradient, use tensor.detach()"""

import numpy as np
import torch

model = torch.nn.Linear(4, 2)
scores = model(torch.randn(8, 4))
array = np.from_dlpack(scores)  # <- CAUSE
