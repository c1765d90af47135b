"""Case 708 - lr_scheduler.step() called at the top of each epoch, before optimizer.step()

Source: pytorch/pytorch test/optim/test_lrscheduler.py, TestLRScheduler.test_old_pattern_warning (assertWarnsRegex 'how-to-adjust-learning-rate')
Category: optimizer / LR scheduler (warning)

Reported symptom:
    UserWarning: Detected call of `lr_scheduler.step()` before `optimizer.step()`. In PyTorch 1.1.0 and later, you should call them in the opposite order: `optimizer.step()` before `lr_scheduler.step()`.  Failure to do this will result in PyTorch skipping the first value of the learning rate schedule. See more details at https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate

Root cause:
    The training loop follows the pre-1.1 pattern and steps the scheduler at
    the beginning of each epoch, before any optimizer.step(). The first value
    of the schedule (the warm-up learning rate) is skipped.

Ground truth a good tool should report:
    `scheduler.step()` at the top of the epoch loop (CAUSE/ERROR) must move
    after the optimizer steps of the epoch.
"""
import torch
import torch.nn as nn

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(5, 10), nn.ReLU(), nn.Linear(10, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
scheduler = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
x, y = torch.randn(40, 5), torch.randn(40, 1)

for epoch in range(3):
    scheduler.step()  # <- CAUSE,ERROR
    for xb, yb in zip(x.split(10), y.split(10)):
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(xb), yb)
        loss.backward()
        opt.step()
    print("epoch", epoch, "lr", opt.param_groups[0]["lr"], "loss", loss.item())
