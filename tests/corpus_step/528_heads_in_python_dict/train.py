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
import torch
import torch.nn.functional as F

from model import RelationScorer

torch.manual_seed(0)

relations = ["born_in", "works_for", "married_to"]
data = {}
for k, rel in enumerate(relations):
    x = torch.randn(200, 12)
    data[rel] = (x, (x[:, k] * x[:, k + 3] > 0).long())

model = RelationScorer(relations)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
print("registered:", [name for name, _ in model.named_parameters()])

for step in range(30):
    rel = relations[step % 3]
    x, y = data[rel]
    idx = torch.randint(0, 200, (64,))
    loss = F.cross_entropy(model(x[idx], rel), y[idx])
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

print(f"final loss {loss.item():.4f}")
