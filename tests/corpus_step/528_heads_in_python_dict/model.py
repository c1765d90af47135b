"""Case 528 - per-relation heads kept in a plain dict are not registered

Source: https://github.com/pytorch/pytorch/issues/10817
        "Parameters in dict not registered"
Category: 6 - structure (registration, sharing, replacement)

Reported symptom:
    named_parameters() lists only the shared encoder; the relation-specific
    scorers never change during training and the relation loss plateaus.

Root cause:
    RelationScorer builds one nn.Linear per relation and stores them in a regular
    Python dict. nn.Module does not look inside dicts, so these modules are not
    submodules: their parameters are absent from model.parameters(), from the
    optimizer and from state_dict(), while backward still fills their .grad.

Ground truth a good tool should report:
    The per-relation Linear modules used in forward are not registered on the
    model (their gradients are never consumed by any optimizer); they live in a
    plain dict created in model.py (the `self.heads = {...}` line); nn.ModuleDict
    is needed.
"""
import torch.nn as nn


class RelationScorer(nn.Module):
    def __init__(self, relations, d_in=12, dim=24):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(d_in, dim), nn.ReLU())
        self.heads = {rel: nn.Linear(dim, 2) for rel in relations}  # <- CAUSE

    def forward(self, x, rel):
        return self.heads[rel](self.encoder(x))
