"""Case 501 - learnable Gabor front-end computed under torch.no_grad() never learns

Source: https://github.com/denfed/leaf-audio-pytorch/issues/3
        "It appears the convolutional layers weight doesn't change while backpropagation because of this."
Category: 1 - every parameter the optimizer holds can get a gradient

Reported symptom:
    The Gabor filterbank parameters of the LEAF front-end print exactly the same
    values before and after 100 Adam steps; the rest of the network trains.

Root cause:
    GaborConv1d.forward builds its constrained filter parameters inside a
    `with torch.no_grad():` block. The kernel derived from them has no grad_fn,
    so backward never reaches `center` and `bandwidth`; the optimizer holds them
    but they never get a gradient.

Ground truth a good tool should report:
    GaborConv1d.center and GaborConv1d.bandwidth are in the optimizer but their
    .grad stays None every step; the gradient path is cut by the no_grad block in
    layers.py (the `with torch.no_grad():` line in GaborConv1d.forward).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class GaborConv1d(nn.Module):
    """A bank of complex Gabor filters parameterised by centre frequency and width."""

    def __init__(self, n_filters, kernel_size):
        super().__init__()
        self.kernel_size = kernel_size
        self.center = nn.Parameter(torch.linspace(0.2, 2.8, n_filters))
        self.bandwidth = nn.Parameter(torch.full((n_filters,), 4.0))
        t = torch.arange(kernel_size, dtype=torch.float32) - (kernel_size - 1) / 2
        self.register_buffer("t", t)

    def _kernel(self, mu, sigma):
        envelope = torch.exp(-0.5 * (self.t[None, :] / sigma[:, None]) ** 2)
        envelope = envelope / (math.sqrt(2 * math.pi) * sigma[:, None])
        real = envelope * torch.cos(mu[:, None] * self.t[None, :])
        imag = envelope * torch.sin(mu[:, None] * self.t[None, :])
        return torch.cat([real, imag], dim=0).unsqueeze(1)

    def forward(self, x):
        with torch.no_grad():  # <- CAUSE
            mu = self.center.clamp(0.0, math.pi)
            sigma = self.bandwidth.clamp(1.0, self.kernel_size / 2)
        kernel = self._kernel(mu, sigma)
        out = F.conv1d(x, kernel, padding=self.kernel_size // 2)
        n = out.shape[1] // 2
        return out[:, :n] ** 2 + out[:, n:] ** 2
