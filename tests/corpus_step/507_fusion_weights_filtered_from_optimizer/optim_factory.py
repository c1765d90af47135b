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
import torch.nn as nn


def build_param_groups(model, weight_decay):
    """Split parameters into decay / no-decay groups by layer type."""
    decay, no_decay = [], []
    for module in model.modules():
        if isinstance(module, (nn.Conv2d, nn.Linear)):  # <- CAUSE
            decay.append(module.weight)
            if module.bias is not None:
                no_decay.append(module.bias)
        elif isinstance(module, nn.BatchNorm2d):
            no_decay.extend([module.weight, module.bias])
    return [
        {"params": decay, "weight_decay": weight_decay},
        {"params": no_decay, "weight_decay": 0.0},
    ]
