"""Case 217 - vocoder upsampling network initialises its smoothing convs with
weight.fill_() outside torch.no_grad()

Source: https://github.com/pytorch/audio/pull/1993 (discussion of WaveRNN's
        UpsampleNetwork: replacing the legacy `conv.weight.data.fill_(...)` by
        `conv.weight.fill_(1)` raised "RuntimeError: a leaf Variable that requires grad
        is being used in an in-place operation."; the reviewers pointed to
        torch.nn.init.constant_)
Category: inplace-on-leaf (autograd error at model construction)

Reported symptom:
    RuntimeError: a leaf Variable that requires grad is being used in an in-place
    operation.  (raised while building the model, before any training)

Root cause:
    conv.weight is an nn.Parameter: a leaf with requires_grad=True.  Calling an
    in-place method on it while grad mode is on is forbidden, because autograd could
    not account for the overwrite.  Initialisation must run under torch.no_grad()
    (which is what torch.nn.init.constant_ does) or go through .data.

Ground truth a good tool should report:
    In-place fill_ on the leaf Parameter `smooth.0.weight` (first smoothing conv)
    at line 49 with grad mode enabled.  Fix:
    nn.init.constant_(conv.weight, 1.0 / k) or wrap the loop in torch.no_grad().
    EXPECT: kind=inplace_leaf; tensor=smooth.0.weight; cause_line=49; error_line=49

Observed (torch 2.13, CPU):
    exit code: 1
    exception:
        RuntimeError: a leaf Variable that requires grad is being used in an
          in-place operation.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class UpsampleNetwork(nn.Module):
    """Upsample mel frames to sample rate, then smooth with box filters."""

    def __init__(self, n_mels=8, scales=(2, 2), k_smooth=5):
        super().__init__()
        self.scales = scales
        self.smooth = nn.ModuleList()
        for _ in scales:
            conv = nn.Conv1d(1, 1, k_smooth, padding=k_smooth // 2, bias=False)
            conv.weight.fill_(1.0 / k_smooth)  # <- CAUSE,ERROR: in-place on a leaf Parameter
            self.smooth.append(conv)
        self.proj = nn.Conv1d(n_mels, n_mels, 1)

    def forward(self, mel):  # mel: (B, n_mels, T)
        x = self.proj(mel)
        for s, conv in zip(self.scales, self.smooth):
            x = F.interpolate(x, scale_factor=s, mode="nearest")
            b, c, t = x.shape
            x = conv(x.reshape(b * c, 1, t)).reshape(b, c, t)
        return x


def train():
    net = UpsampleNetwork()
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
    mel = torch.randn(4, 8, 16)
    target = torch.randn(4, 8, 64)
    for step in range(3):
        loss = F.mse_loss(net(mel), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"step {step}: loss={loss.item():.4f}")


train()
