"""Case 910 - bf16 backbone built with the default dtype restored, autocast scoped (correct)

Source: https://github.com/pytorch/pytorch/issues/120819
        "to set a dtype and restore the previous dtype"
Category: correct (invariant 5)
EXPECT: no findings

Reported symptom:
    None. A frozen backbone is materialised in bfloat16 and a float32 head is
    trained on its features.

Root cause:
    None. load_backbone() changes the default dtype only inside try/finally and
    restores the previous one; the bf16 backbone runs inside a
    torch.autocast("cpu") block whose scope ends before the head; the head, its
    optimizer and the loss are float32.

Ground truth a good tool should report:
    Nothing. Both global switches are restored before training code runs.
"""
import torch
import torch.nn as nn


def load_backbone(dtype=torch.bfloat16):
    previous = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        backbone = nn.Sequential(nn.Linear(32, 32), nn.Tanh())
    finally:
        torch.set_default_dtype(previous)
    backbone.requires_grad_(False)
    return backbone


def extract(backbone, x):
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        feats = backbone(x)
    return feats.float()
