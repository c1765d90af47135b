"""Case 503 - evolved weight re-wrapped in a fresh nn.Parameter inside forward

Source: https://github.com/benedekrozemberczki/pytorch_geometric_temporal/issues/80
        "I found that the gradient function may be lost in the implementation of EvolveGCN."
Category: 1 - every parameter the optimizer holds can get a gradient

Reported symptom:
    The recurrent unit that is supposed to evolve the GCN weight over time never
    learns: its parameters (and the initial weight) keep their initial values,
    only the bias of the graph layer moves.

Root cause:
    EvolvingGraphLayer.forward computes the evolved weight W with a GRU cell and
    then assigns `self.conv.weight = nn.Parameter(W)`. nn.Parameter makes a new
    leaf tensor, so W's history is thrown away: the GRU parameters and
    initial_weight (all held by the optimizer) never receive a gradient, and the
    gradient that is computed lands on a throw-away parameter.

Ground truth a good tool should report:
    layer.evolve.* and layer.initial_weight never get a gradient although they are
    optimised; the graph is cut where forward re-wraps the evolved weight in a new
    nn.Parameter (model.py, the `self.conv.weight = nn.Parameter(W)` line).
"""
import torch
import torch.nn as nn


class GraphLinear(nn.Module):
    """Dense graph convolution: A_hat @ X @ W^T + b."""

    def __init__(self, d_in, d_out):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(d_out, d_in) * 0.1)
        self.bias = nn.Parameter(torch.zeros(d_out))

    def forward(self, a_hat, x):
        return a_hat @ x @ self.weight.t() + self.bias


class EvolvingGraphLayer(nn.Module):
    """EvolveGCN-O style layer: a GRU evolves the weight matrix at every snapshot."""

    def __init__(self, d_in, d_out):
        super().__init__()
        self.initial_weight = nn.Parameter(torch.randn(d_out, d_in) * 0.1)
        self.evolve = nn.GRUCell(d_in, d_in)
        self.conv = GraphLinear(d_in, d_out)

    def forward(self, a_hat, x):
        W = self.evolve(self.initial_weight, self.initial_weight)
        self.conv.weight = nn.Parameter(W)  # <- CAUSE
        return self.conv(a_hat, x)


class TemporalRegressor(nn.Module):
    def __init__(self, d_in=6, d_hidden=8):
        super().__init__()
        self.layer = EvolvingGraphLayer(d_in, d_hidden)
        self.out = nn.Linear(d_hidden, 1)

    def forward(self, a_hat, x):
        return self.out(torch.relu(self.layer(a_hat, x))).squeeze(-1)
