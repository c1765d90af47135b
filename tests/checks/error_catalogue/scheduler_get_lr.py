"""The learning rate read with get_lr() outside step() (torch's test_lrscheduler: test_get_last_lr / the get_lr warning)."""

import torch

w = torch.nn.Parameter(torch.randn(3))
opt = torch.optim.SGD([w], lr=0.1)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
opt.step()
sched.step()
print(sched.get_lr())  # <- CAUSE
