"""Case 524 - ModuleList built by list multiplication repeats one residual block

Source: https://github.com/zalandoresearch/pytorch-vq-vae/issues/2
        "duplicates a reference to a single `Residual` object instance"
Category: 6 - structure (registration, sharing, replacement)

Reported symptom:
    The residual stack meant to have num_residual_layers independent blocks has
    the parameter count of a single block; all layers hold identical weights and
    move identically during training.

Root cause:
    ResidualStack builds its layers with `nn.ModuleList([Residual(...)] * n)`.
    List multiplication repeats a reference to the same Residual instance, so one
    module is registered at n places and its weights are shared by every layer.

Ground truth a good tool should report:
    One Residual module is registered at several places in the model
    (stack._layers.0 and stack._layers.1 are the same object) and its parameters
    are updated once with the summed gradient of all uses; the duplication comes
    from the list multiplication in model.py (the `nn.ModuleList([...] * ...)` line).
"""
import torch
import torch.nn.functional as F

from model import Encoder

torch.manual_seed(0)

t = torch.linspace(0, 6.28, 32)
signals = torch.sin(t[None, None, :] * torch.randint(1, 4, (128, 1, 1)) + torch.rand(128, 1, 1))

model = Encoder()
optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)

for step in range(25):
    idx = torch.randint(0, 128, (32,))
    loss = F.mse_loss(model(signals[idx]), signals[idx])
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

n_params = sum(p.numel() for p in model.stack.parameters())
print(f"residual stack parameters: {n_params} (same object twice: {model.stack._layers[0] is model.stack._layers[1]})")
print(f"final loss {loss.item():.4f}")
