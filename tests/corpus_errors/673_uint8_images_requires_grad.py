"""Case 673 - saliency map requested on raw uint8 images

Source: pytorch/pytorch test/test_autograd.py, test_set_requires_grad_only_for_floats (assertRaisesRegex 'floating point')
Category: requires_grad / dtype

Reported symptom:
    RuntimeError: only Tensors of floating point dtype can require gradients

Root cause:
    The images come out of the "loader" as uint8 pixel values and the user
    calls `images.requires_grad_()` to compute an input-gradient saliency map.
    Only floating point (and complex) tensors can require gradients; the
    conversion to float happens too late (inside the model).

Ground truth a good tool should report:
    The batch is created as uint8 (CAUSE) and `requires_grad_()` (ERROR) is
    called on it; convert to float (e.g. `/ 255.`) before requiring grad.
"""
import torch
import torch.nn as nn

torch.manual_seed(0)


def load_batch(n):
    return torch.randint(0, 256, (n, 1, 8, 8), dtype=torch.uint8)  # <- CAUSE


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.fc = nn.Linear(4 * 8 * 8, 10)

    def forward(self, x):
        x = x.float() / 255.0
        return self.fc(torch.relu(self.conv(x)).flatten(1))


model = SmallCNN().eval()
images = load_batch(2)
images.requires_grad_()  # <- ERROR
scores = model(images)
scores[:, 3].sum().backward()
saliency = images.grad.abs().amax(1)
print("saliency", saliency.shape)
