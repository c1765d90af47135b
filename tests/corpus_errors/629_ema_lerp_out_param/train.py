"""Case 629 - training with an exponential moving average of the weights (entry point)

Source: pytorch/pytorch test/test_autograd.py, test_out_variant_raises_when_inputs_require_grad (assertRaisesRegex "out=" when the output requires grad)
Category: out-variant

Reported symptom:
    RuntimeError: lerp(): functions with out=... arguments don't support automatic differentiation, but one of the arguments requires grad.

Root cause:
    ema.py, ModelEMA.update writes into the shadow parameters (which require grad)
    with an out= op while grad mode is on.

Ground truth a good tool should report:
    ema.py, the `torch.lerp(..., out=s)` line of ModelEMA.update (do the update under
    torch.no_grad()); reached from ema.update(model) below.
"""
import torch
from torch import nn

from ema import ModelEMA

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(6, 32), nn.ReLU(), nn.Linear(32, 1))
ema = ModelEMA(model, decay=0.95)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
x = torch.randn(40, 6)
y = x.pow(2).sum(dim=1, keepdim=True)

for step in range(3):
    loss = nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    ema.update(model)
    with torch.no_grad():
        ema_loss = nn.functional.mse_loss(ema(x), y)
    print(f"step {step} loss {loss.item():.3f} ema loss {ema_loss.item():.3f}")
