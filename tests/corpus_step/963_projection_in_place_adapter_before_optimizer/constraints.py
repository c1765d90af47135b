"""Case 963 - weights projected in place, gains in a ParameterList, adapter added first (correct)

Source: https://discuss.pytorch.org/t/set-nn-parameter-during-training/178163
        (change a trainable parameter by copying into it under no_grad; the optimizer
        keeps updating it)
Category: correct (invariants 2 and 6)
EXPECT: no findings

Reported symptom:
    None. Mixing weights are clamped back into [0, 1] after each step, per-band
    gains live in an nn.ParameterList, and an adapter module is added to the model
    before the optimizer is built.

Root cause:
    None. The projection writes into the existing Parameters under torch.no_grad(),
    so the optimizer keeps holding the tensors the model uses; the ParameterList
    registers the gains; the optimizer is built after the model is final.

Ground truth a good tool should report:
    Nothing.
"""
import torch


@torch.no_grad()
def project_mixing(model):
    """Keep every mixing weight inside [0, 1]."""
    for block in model.blocks:
        block.alpha.copy_(block.alpha.clamp(0.0, 1.0))
