"""Case 523 - model loader sets the default dtype to bfloat16 and never restores it

Source: https://github.com/vllm-project/vllm/pull/971
        "Modifying the global state is unexpected and can lead to issues later (regarding eg. precision or when testing)."
Category: 5 - global switches are scoped

Reported symptom:
    A small fp32 head trained on top of a frozen bf16 backbone barely learns: the
    loss moves in the third decimal and most head weights are bit-for-bit
    unchanged after dozens of Adam steps.

Root cause:
    load_backbone() calls torch.set_default_dtype(torch.bfloat16) so that the
    backbone is materialised directly in bf16, but never restores the previous
    default. Every tensor and module created afterwards - the new head, the
    training data - is bf16, and with lr=1e-4 most Adam updates are smaller than
    half a bf16 ulp of the weights, so they round away to nothing.

Ground truth a good tool should report:
    The default dtype is bfloat16 for the whole training run (head parameters are
    bf16 and most steps leave them unchanged); it was set globally and not
    restored in loader.py (the `torch.set_default_dtype(dtype)` line).
"""
import torch
import torch.nn as nn


def load_backbone(dtype=torch.bfloat16):
    """Materialise the (pretrained) backbone directly in a low-precision dtype."""
    torch.set_default_dtype(dtype)  # <- CAUSE
    backbone = nn.Sequential(nn.Linear(32, 32), nn.Tanh())
    backbone.requires_grad_(False)
    return backbone
