"""Case 604 - a projection helper re-wraps a constrained weight in a new Parameter

Source: https://discuss.pytorch.org/t/set-nn-parameter-during-training/178163
        (setting a trainable parameter by hand during training; the answer copies the
        new values in under no_grad instead)
Category: 2 - every gradient backward produces is consumed

Reported symptom:
    A mixing weight that must stay in [0, 1] is projected back into range after each
    optimizer step; from the second step on it never changes again apart from the
    projection, and the model stops improving.

Root cause:
    project_mixing() in constraints.py writes `block.alpha = nn.Parameter(...clamp...)`:
    each call installs a new Parameter object on the module. The optimizer built
    before the loop still holds the first one, which the model no longer uses; the new
    one gets gradients at every backward and no optimizer applies them.

Ground truth a good tool should report:
    alpha was replaced by a new Parameter of the same shape in constraints.py after
    the optimizer collected the old one; copy the clamped values into the existing
    Parameter under torch.no_grad() instead.
"""
import torch.nn as nn


def project_mixing(model):
    """Keep every mixing weight inside [0, 1]."""
    for block in model.blocks:
        block.alpha = nn.Parameter(block.alpha.detach().clamp(0.0, 1.0))  # <- CAUSE
