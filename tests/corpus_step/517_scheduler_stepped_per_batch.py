"""Case 517 - epoch-based StepLR stepped after every batch drives the lr to zero

Source: https://github.com/Lornatang/SRGAN-PyTorch/issues/1
        "they are called at each training step which means that learning rate is quickly becoming zero after a few training steps."
Category: 4 - a step changes what it should and nothing else

Reported symptom:
    The super-resolution network does not seem to train: after the first few
    iterations the parameters barely move and the loss plateaus far above what
    the same model reaches when the scheduler is stepped per epoch.

Root cause:
    StepLR(step_size=epochs // 2, gamma=0.1) is meant to decay the lr once half
    way through training, counted in epochs. scheduler.step() is called inside the
    batch loop, so the lr is divided by 10 every epochs // 2 *batches*; after a
    couple of dozen batches it is ~1e-10 and optimizer steps no longer change the
    weights.

Ground truth a good tool should report:
    Optimizer steps stop changing the parameters because the learning rate has
    collapsed to ~0 within the first epoch; the epoch scheduler is stepped per
    batch (the `scheduler.step()` line inside the batch loop).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

epochs = 4
hr = torch.rand(64, 1, 8, 8)
lr_img = F.interpolate(F.avg_pool2d(hr, 2), scale_factor=2.0, mode="nearest")
batches = [(lr_img[i:i + 8], hr[i:i + 8]) for i in range(0, 64, 8)]

model = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 1, 3, padding=1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=epochs // 2, gamma=0.1)

for epoch in range(epochs):
    for low, high in batches:
        loss = F.mse_loss(model(low) + low, high)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()  # <- CAUSE

print(f"lr at the end {optimizer.param_groups[0]['lr']:.2e}")
print(f"final loss {loss.item():.5f}")
