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
import torch.nn as nn


class Residual(nn.Module):
    def __init__(self, channels, hidden):
        super().__init__()
        self.block = nn.Sequential(
            nn.ReLU(), nn.Conv1d(channels, hidden, 3, padding=1),
            nn.ReLU(), nn.Conv1d(hidden, channels, 1),
        )

    def forward(self, x):
        return x + self.block(x)


class ResidualStack(nn.Module):
    def __init__(self, channels, hidden, num_residual_layers):
        super().__init__()
        self._layers = nn.ModuleList([Residual(channels, hidden)] * num_residual_layers)  # <- CAUSE

    def forward(self, x):
        for layer in self._layers:
            x = layer(x)
        return x.relu()


class Encoder(nn.Module):
    def __init__(self, channels=8, hidden=4, num_residual_layers=2):
        super().__init__()
        self.conv = nn.Conv1d(1, channels, 4, stride=2, padding=1)
        self.stack = ResidualStack(channels, hidden, num_residual_layers)
        self.decode = nn.ConvTranspose1d(channels, 1, 4, stride=2, padding=1)

    def forward(self, x):
        return self.decode(self.stack(self.conv(x)))
