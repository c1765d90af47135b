"""Case 204 - SSD L2Norm layer divides its input in place (`x /= norm`)

Source: https://github.com/lzx1413/PytorchSSD/issues/72
        "one of the variables needed for gradient computation has been modified by an
        inplace operation" -- solved by changing `x /= norm` to `x = x / norm` in
        layers/modules/l2norm.py.  Same pattern (output /= its own norm) in
        https://github.com/adambielski/siamese-triplet/issues/51 (EmbeddingNetL2).
Category: inplace-modified-saved-tensor (augmented assignment on an activation)

Reported symptom:
    RuntimeError: one of the variables needed for gradient computation has been
    modified by an inplace operation   (changing `x /= norm` to `x = x / norm` fixes it)

Root cause:
    L2Norm.forward receives the conv4_3 feature map `x` (the output of F.relu, which
    ReluBackward0 saves as its result) and computes norm = x.pow(2).sum(...).sqrt()
    (PowBackward0 saves `x` as well).  Then `x /= norm` rewrites `x` in place, so
    both saved copies are stale when backward reaches them.

Ground truth a good tool should report:
    Tensor `x` (output of F.relu in VGGStem.forward) was saved by PowBackward0 in
    L2Norm.forward (and by ReluBackward0 itself) and modified in place by the
    augmented division `x /= norm`.  Fix: `x = x / norm`.
    Note: the error text names the tensor's grad_fn after the in-place op
    ('output 0 of Div'), not ReLU that produced it.
    EXPECT: kind=inplace_saved_tensor; tensor=x; inplace_op=div_; cause_line=51;
            saved_line=50; created_line=63; error_line=89

Observed (torch 2.13, CPU):
    exit code: 1
    exception:
        RuntimeError: one of the variables needed for gradient computation has been
          modified by an inplace operation: [torch.FloatTensor [2, 16, 8, 8]], which
          is output 0 of Div, is at version 1; expected version 0 instead. Hint: ...
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class L2Norm(nn.Module):
    def __init__(self, n_channels, scale=20.0):
        super().__init__()
        self.weight = nn.Parameter(torch.full((n_channels,), scale))
        self.eps = 1e-10

    def forward(self, x):
        norm = x.pow(2).sum(dim=1, keepdim=True).sqrt() + self.eps  # <- SAVED: pow saves x
        x /= norm  # <- CAUSE: in-place division of the saved feature map
        return self.weight[None, :, None, None] * x


class VGGStem(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 16, 3, padding=1)

    def forward(self, img):
        x = F.relu(self.conv1(img))
        return F.relu(self.conv2(x))  # <- CREATED: conv4_3-like feature map


class TinySSDHead(nn.Module):
    def __init__(self, n_anchors=4, n_classes=3):
        super().__init__()
        self.stem = VGGStem()
        self.l2norm = L2Norm(16)
        self.loc = nn.Conv2d(16, n_anchors * 4, 3, padding=1)
        self.conf = nn.Conv2d(16, n_anchors * n_classes, 3, padding=1)

    def forward(self, img):
        f = self.l2norm(self.stem(img))
        return self.loc(f), self.conf(f)


model = TinySSDHead()
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
images = torch.randn(2, 3, 8, 8)
loc_t = torch.randn(2, 16, 8, 8)
conf_t = torch.randint(0, 3, (2, 4, 8, 8))

for it in range(2):
    loc, conf = model(images)
    loss = F.smooth_l1_loss(loc, loc_t) + F.cross_entropy(conf.view(2, 3, 4, 8, 8), conf_t)
    optimizer.zero_grad()
    loss.backward()  # <- ERROR
    optimizer.step()
    print(f"iter {it}: loss={loss.item():.4f}")
