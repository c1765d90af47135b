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
import torch.nn.functional as F

from model import TemporalRegressor

torch.manual_seed(0)

n_nodes, d_in = 12, 6
adj = (torch.rand(n_nodes, n_nodes) < 0.3).float()
adj = ((adj + adj.t() + torch.eye(n_nodes)) > 0).float()
deg = adj.sum(1)
a_hat = adj / torch.sqrt(deg[:, None] * deg[None, :])

snapshots = [torch.randn(n_nodes, d_in) for _ in range(8)]
targets = [a_hat @ x @ torch.linspace(-1, 1, d_in) for x in snapshots]

model = TemporalRegressor(d_in)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
gru_before = model.layer.evolve.weight_ih.detach().clone()

for epoch in range(3):
    for x, y in zip(snapshots, targets):
        loss = F.mse_loss(model(a_hat, x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

gru_moved = (model.layer.evolve.weight_ih.detach() - gru_before).abs().max().item()
print(f"final loss {loss.item():.4f}  GRU weight moved {gru_moved:.6f}")
