"""loaded state dict contains a parameter group that doesn't match the size of optimizer's group"""

import torch

old = torch.nn.Linear(3, 2, bias=False)
saved = torch.optim.SGD(old.parameters(), lr=0.1).state_dict()
model = torch.nn.Linear(3, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
optimizer.load_state_dict(saved)  # <- CAUSE
