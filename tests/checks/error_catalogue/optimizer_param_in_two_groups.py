"""some parameters appear in more than one parameter group"""

import torch

model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Linear(4, 2))
base = {"params": model.parameters(), "lr": 0.1}  # <- CAUSE
head = {"params": model[1].parameters(), "lr": 0.01}
optimizer = torch.optim.SGD([base, head], lr=0.1)  # <- ERROR
