"""The scheduler stepped before the optimizer (torch's test_lrscheduler: test_old_pattern_warning)."""

import torch

w = torch.nn.Parameter(torch.randn(3))
opt = torch.optim.SGD([w], lr=0.1)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
for _ in range(2):
    opt.zero_grad()
    sched.step()  # <- CAUSE
    (w**2).sum().backward()
    opt.step()
