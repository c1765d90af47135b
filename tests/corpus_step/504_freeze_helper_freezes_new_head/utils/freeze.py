"""Case 504 - freeze helper builds its keep-trainable set from checkpoint keys and freezes the new head

Source: https://github.com/Project-MONAI/MONAI/pull/6970
        "this doesn't seem to match the docstring"
Category: 1 - every parameter the optimizer holds can get a gradient

Reported symptom:
    Fine-tuning a pretrained backbone with a new classification head: the loss
    stalls high, the head keeps its random initial weights; only a few
    normalisation parameters change.

Root cause:
    freeze_layers() decides which parameters stay trainable by matching the
    exclude pattern against the keys of the *pretrained state dict* instead of the
    model's own parameter names. The freshly added head is not in the
    checkpoint, so it never matches and gets requires_grad=False, while the
    optimizer still holds it.

Ground truth a good tool should report:
    head.weight and head.bias are held by the optimizer but have requires_grad
    False (never get a gradient); they were frozen in utils/freeze.py where the
    trainable set is built from src_dict keys (the `to_exclude = ...` line).
"""
import re


def freeze_layers(model, src_dict, exclude_vars=None):
    """Freeze every parameter except those whose name matches exclude_vars."""
    pattern = re.compile(exclude_vars) if exclude_vars else None
    to_exclude = {k for k in src_dict if pattern is not None and pattern.search(k)}  # <- CAUSE
    frozen = []
    for name, param in model.named_parameters():
        if name not in to_exclude:
            param.requires_grad = False
            frozen.append(name)
    return frozen
