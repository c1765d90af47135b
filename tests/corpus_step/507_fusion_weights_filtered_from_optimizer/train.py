"""Case 507 - BiFPN fusion weights are left out by a by-module-type parameter collector

Source: https://github.com/bubbliiiing/efficientdet-pytorch/issues/37
        "w仍然是【1,1】" (after training the fusion weight w is still [1, 1])
Category: 2 - every gradient backward produces is consumed

Reported symptom:
    The learnable weights of the weighted feature fusion (BiFPN) stay at their
    initial value [1, 1] after training, although their .grad is non-zero and
    changes at every iteration.

Root cause:
    The optimizer is built from parameter groups collected by walking
    model.modules() and picking the weights of Conv/Linear/BatchNorm layers (for
    weight-decay grouping). The fusion weights are nn.Parameters owned directly by
    the FusionNode module, not by one of those layer types, so they never enter
    any param group: their gradients are computed but never consumed.

Ground truth a good tool should report:
    fpn.*.w receive gradients every step but belong to no optimizer param group;
    they are dropped by the isinstance filter in optim_factory.py (the
    `if isinstance(module, (nn.Conv2d, nn.Linear)):` line).
"""
import torch
import torch.nn.functional as F

from model import TinyDet
from optim_factory import build_param_groups

torch.manual_seed(0)

images = torch.randn(96, 1, 8, 8)
labels = torch.randint(0, 3, (96,))
images[labels == 1, :, :4] += 1.5
images[labels == 2, :, :, :4] -= 1.5

model = TinyDet()
optimizer = torch.optim.SGD(build_param_groups(model, 1e-4), lr=0.05, momentum=0.9)

for step in range(20):
    idx = torch.randint(0, 96, (32,))
    loss = F.cross_entropy(model(images[idx]), labels[idx])
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

print(f"final loss {loss.item():.4f}  fusion w {model.fpn[0].w.detach().tolist()}  grad {model.fpn[0].w.grad.tolist()}")
