"""Case 591 - a face detector used in the data pipeline turns gradients off for good

Source: https://github.com/choyingw/SynergyNet/pull/22
        (FaceBoxes switched gradients off with a global torch.set_grad_enabled(False);
        the fix replaces it with a scoped, local version)
Category: 5 - global switches are scoped

Root cause:
    FaceBoxes.__call__ disables gradients with a plain call, meant for its own
    detection pass, and returns with them still off. It is called by the
    dataset for every sample, so everything the training loop computes after
    the first batch is loaded runs without autograd.
"""
import torch
import torch.nn as nn


class FaceBoxes:
    def __init__(self, size=8):
        self.size = size
        self.net = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 1, 1))
        self.net.requires_grad_(False)
        self.net.eval()

    def __call__(self, image):
        torch.set_grad_enabled(False)  # <- CAUSE
        scores = self.net(image[None, None])[0, 0]
        flat = int(scores[: -self.size, : -self.size].argmax())
        row, col = divmod(flat, scores.shape[1] - self.size)
        return row, col
