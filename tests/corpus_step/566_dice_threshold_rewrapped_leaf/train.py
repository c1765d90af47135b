"""Case 566 - Dice loss on thresholded predictions, rewrapped with requires_grad=True

Source: https://github.com/qubvel-org/segmentation_models.pytorch/pull/611
        "fixed that by making the function return a tensor that requires grad"
Category: 8 - tensors that require grad do not leave autograd silently

Reported symptom:
    Adding a threshold option to the Dice loss made backward() fail with
    "element 0 of tensors does not require grad and does not have a grad_fn".
    The proposed fix wraps the thresholded mask in torch.tensor(...,
    requires_grad=True); training then runs, but the segmentation network does
    not learn and the loss never moves.

Root cause:
    `x > threshold` is a comparison: its result has no gradient. Wrapping it in
    torch.tensor(..., requires_grad=True) makes a brand-new leaf that is not
    connected to the network, so the Dice loss computed from it only reaches
    that leaf. No model parameter gets a gradient.

Ground truth a good tool should report:
    No parameter gets a gradient: the predictions left the graph at the
    threshold in losses/functional.py (the `x > threshold` comparison, rewrapped
    as a new leaf on the same line).
"""
import torch
import torch.nn as nn

from losses.dice import DiceLoss

torch.manual_seed(0)

net = nn.Sequential(
    nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 1, 3, padding=1), nn.Sigmoid()
)
criterion = DiceLoss(threshold=0.5)
optimizer = torch.optim.Adam(net.parameters(), lr=1e-2)

images = torch.rand(32, 1, 16, 16)
masks = (images > 0.6).float()

for epoch in range(20):
    idx = torch.randint(0, 32, (8,))
    loss = criterion(net(images[idx]), masks[idx])
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

print(f"final dice loss {loss.item():.4f}")
