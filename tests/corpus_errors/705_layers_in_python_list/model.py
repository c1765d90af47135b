"""Case 705 - MLP keeps its layers in a plain Python list

Source: pytorch/pytorch test/optim/test_optim.py (Optimizer rejects an empty parameter list: "optimizer got an empty parameter list")
Category: optimizer construction / module registration

Reported symptom:
    ValueError: optimizer got an empty parameter list

Root cause:
    ConfigurableMLP (model.py) builds its layers in a list comprehension and
    stores them in a regular Python list attribute. nn.Module only registers
    sub-modules assigned directly or held in nn.ModuleList/ModuleDict, so the
    model reports no parameters and the optimizer receives an empty list.

Ground truth a good tool should report:
    `self.layers = [...]` in model.py (CAUSE) must be an nn.ModuleList; the
    optimizer construction in train.py raises (ERROR).
"""
import torch
import torch.nn as nn


class ConfigurableMLP(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        self.layers = [nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:])]  # <- CAUSE

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i < len(self.layers) - 1:
                x = torch.relu(x)
        return x
