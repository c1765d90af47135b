"""Case 606 - input-gradient saliency map on images that do not require grad

Source: pytorch/pytorch test/test_autograd.py, test_grad_badcalls (assertRaisesRegex "does not require grad" for torch.autograd.grad(y, x))
Category: requires-grad

Reported symptom:
    RuntimeError: One of the differentiated Tensors does not require grad

Root cause:
    To build a saliency map the script asks torch.autograd.grad for d(score)/d(images),
    but the image batch was created as a plain tensor without requires_grad. The
    score does have a graph (through the model weights), yet autograd can only
    differentiate with respect to tensors that require grad.

Ground truth a good tool should report:
    The `images = torch.rand(...)` line must mark the input as requiring grad
    (e.g. `.requires_grad_()`); the error is raised by the torch.autograd.grad call.
"""
import torch
from torch import nn

torch.manual_seed(0)

model = nn.Sequential(
    nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 5)
)
model.eval()

images = torch.rand(2, 3, 16, 16)  # <- CAUSE: never marked requires_grad
scores = model(images)
best = scores.argmax(dim=1, keepdim=True)
top_score = scores.gather(1, best).sum()

(saliency,) = torch.autograd.grad(top_score, images)  # <- ERROR
heat = saliency.abs().amax(dim=1)
print("saliency map", heat.shape)
