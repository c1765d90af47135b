"""some parameters appear in more than one parameter group"""

import torch

model = torch.nn.Linear(3, 2)
optimizer = torch.optim.SGD(  # <- CAUSE
    [{"params": model.parameters()}, {"params": [model.bias], "lr": 0.01}], lr=0.1
)
