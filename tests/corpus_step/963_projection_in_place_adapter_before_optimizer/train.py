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
import torch.nn.functional as F

from constraints import project_mixing
from model import Regressor

torch.manual_seed(0)

x = torch.randn(512, 12)
y = torch.tanh(x[:, :3].sum(1)) + 0.1 * x[:, 3:].pow(2).sum(1)

model = Regressor()
model.add_adapter()
optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)

for step in range(20):
    idx = torch.randint(0, 512, (64,))
    loss = F.mse_loss(model(x[idx]), y[idx])
    if step == 0:
        first = loss.item()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    project_mixing(model)

print(f"loss {first:.4f} -> {loss.item():.4f}")
