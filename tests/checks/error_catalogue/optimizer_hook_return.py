"""optimizer step pre-hook returned what torch refused: must return None or a tuple of (new_args, new_kwargs), but got"""

import torch

model = torch.nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)


def log_step(optimizer, args, kwargs):
    return optimizer.param_groups[0]["lr"]  # <- CAUSE


optimizer.register_step_pre_hook(log_step)
model(torch.randn(4, 3)).sum().backward()
optimizer.step()  # <- ERROR
