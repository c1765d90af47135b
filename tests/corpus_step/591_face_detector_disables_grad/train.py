"""Case 591 - a face detector used in the data pipeline turns gradients off for good

Source: https://github.com/choyingw/SynergyNet/pull/22
        "This global switch can cause confusing behavior or bugs globally."
Category: 5 - global switches are scoped

Reported symptom:
    Training a landmark regressor on face crops fails at the first backward()
    with "element 0 of tensors does not require grad and does not have a
    grad_fn", although nothing in the training loop turns gradients off.

Root cause:
    FaceBoxes.__call__ (faceboxes.py), called by the dataset for every sample,
    runs torch.set_grad_enabled(False) as a plain call and never restores it.

Ground truth a good tool should report:
    Gradients were switched off by the set_grad_enabled(False) call in
    FaceBoxes.__call__ and were still off when the loss was computed; use
    `with torch.no_grad():` there.
"""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader

from data import FaceCrops

torch.manual_seed(0)

images = torch.randn(128, 20, 20)
targets = images[:, :4, :4].reshape(128, -1)[:, :6]
loader = DataLoader(FaceCrops(images, targets), batch_size=16, shuffle=True)

model = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 6))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
loss_fn = nn.MSELoss()

for epoch in range(2):
    for crops, landmarks in loader:
        loss = loss_fn(model(crops), landmarks)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
print(f"final loss {loss.item():.4f}")
