"""Case 199 - the gradient of an intermediate activation read without retain_grad().

Source: a frequent discuss.pytorch.org report (paraphrased): "the .grad of my feature map is
None" (for a saliency/Grad-CAM computation).
Root cause: .grad is only kept for leaves; call feat.retain_grad() before backward (or
register a hook / use torch.autograd.grad).
"""
import torch
from torch import nn

torch.manual_seed(0)
conv = nn.Conv2d(3, 4, 3, padding=1)
head = nn.Linear(4, 2)
image = torch.randn(1, 3, 8, 8)
feat = conv(image)  # <- CAUSE
score = head(feat.mean(dim=(2, 3)))[0, 1]
score.backward()
weights = feat.grad.mean(dim=(2, 3))  # <- READ
