"""Case 127 - BiFPN fast-normalised fusion applies an in-place ReLU directly to its weight Parameter

Source: https://github.com/zylo117/Yet-Another-EfficientDet-Pytorch/issues/503
        "RuntimeError: a leaf Variable that requires grad is being used in an
        in-place operation." (Fusefeature: `weight = self.weight_relu(self.weight)`
        on an nn.Parameter; maintainer: "Try performing relu on
        self.weight.clone(), instead of self.weight")
Category: leaf modified in place (activation on a parameter)

Reported symptom:
    RuntimeError: a leaf Variable that requires grad is being used in an
    in-place operation.

Root cause:
    The fusion node keeps its per-input fusion weights as an nn.Parameter and
    makes them non-negative with a ReLU before normalising them.  The ReLU
    module was built with inplace=True (shared with the conv blocks to save
    memory), so calling it on the parameter tries to overwrite a leaf that
    requires grad, which autograd forbids.  An out-of-place ReLU (F.relu, or
    nn.ReLU() without inplace) on the parameter fixes it.

Ground truth a good tool should report:
    `self.fuse_w` (nn.Parameter, leaf, requires_grad; created at line 48) is
    modified in place by the ReLU(inplace=True) built at line 49, called on it
    at line 55.  Fix: inplace=False at line 49, or F.relu(self.fuse_w) at 55.
    EXPECT: kind=leaf_inplace; tensor=fuse_w; created_line=48;
            cause_line=49,55; error_line=55

Observed (torch 2.13.0, CPU, this script):
    exit code: 1
    exception:
        RuntimeError: a leaf Variable that requires grad is being used in an
          in-place operation.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class FuseNode(nn.Module):
    """out = conv(sum_i relu(w_i) * x_i / (sum_j relu(w_j) + eps))"""

    def __init__(self, channels, n_inputs=2, eps=1e-4):
        super().__init__()
        self.eps = eps
        self.fuse_w = nn.Parameter(torch.ones(n_inputs))  # <- CREATED
        self.act = nn.ReLU(inplace=True)  # <- CAUSE: in-place activation reused on a Parameter
        self.conv = nn.Sequential(
            nn.Conv2d(channels, channels, 3, padding=1, bias=False), nn.BatchNorm2d(channels), self.act,
        )

    def forward(self, inputs):
        w = self.act(self.fuse_w)  # <- CAUSE,ERROR: relu_ on a leaf that requires grad
        w = w / (w.sum() + self.eps)
        fused = sum(w[i] * x for i, x in enumerate(inputs))
        return self.conv(fused)


class TinyBiFPN(nn.Module):
    def __init__(self, c=8):
        super().__init__()
        self.lat_hi = nn.Conv2d(4, c, 1)
        self.lat_lo = nn.Conv2d(16, c, 1)
        self.td = FuseNode(c)
        self.head = nn.Conv2d(c, 3, 1)

    def forward(self, p_hi, p_lo):
        hi = self.lat_hi(p_hi)
        lo = F.interpolate(self.lat_lo(p_lo), scale_factor=2.0, mode="nearest")
        return self.head(self.td([hi, lo]))


model = TinyBiFPN()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
p3, p4 = torch.randn(2, 4, 16, 16), torch.randn(2, 16, 8, 8)
target = torch.randn(2, 3, 16, 16)

for step in range(2):
    optimizer.zero_grad()
    loss = F.smooth_l1_loss(model(p3, p4), target)
    loss.backward()
    optimizer.step()
print("fusion weights:", model.td.fuse_w.detach().tolist(), "(bug not reproduced)")
