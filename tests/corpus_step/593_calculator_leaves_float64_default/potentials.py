"""Case 593 - a calculator sets the default dtype to float64 and a later student crashes

Source: https://github.com/ACEsuit/mace/issues/877
        (the calculators call torch.set_default_dtype(dtype) when they are made, which
        changes the dtype of everything created afterwards in the process)
Category: 5 - global switches are scoped

Root cause:
    PairPotential.__init__ switches the process-wide default dtype to float64
    for its own precision and never puts it back.
"""
import torch
import torch.nn as nn


class PairPotential:
    def __init__(self, dtype=torch.float64):
        torch.set_default_dtype(dtype)  # <- CAUSE
        self.well = nn.Parameter(torch.tensor([1.0, 1.2]), requires_grad=False)

    def energy(self, distances):
        r6 = (self.well[1] / distances) ** 6
        return (4 * self.well[0] * (r6 * r6 - r6)).sum(-1)
