"""Case 600 - the pitch and loudness encoders are one MLP, repeated by list multiplication

Source: https://github.com/acids-ircam/ddsp_pytorch/issues/37
        "Do MLPs share weight by accident?"
Category: 6 - structure (registration, sharing, replacement)

Reported symptom:
    The model trains, but a model summary marks the second input MLP as recursive:
    pitch and loudness are encoded with the very same weights, although the paper
    describes one encoder per input.

Root cause:
    DDSP.__init__ builds `nn.ModuleList([mlp(1, hidden, 3)] * 2)`. Python's list
    multiplication repeats the reference, so in_mlps[0] is in_mlps[1]: one MLP object
    sits at two slots of the ModuleList, and both inputs go through the same
    parameters. Nothing fails; the model just has half the encoders it was meant to.

Ground truth a good tool should report:
    in_mlps[0] and in_mlps[1] are one module object, placed twice in the ModuleList
    by the list multiplication on the `self.in_mlps = ...` line; build one MLP per
    slot (a list comprehension).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def mlp(in_size, hidden_size, n_layers):
    layers = []
    for i in range(n_layers):
        layers.append(nn.Linear(in_size if i == 0 else hidden_size, hidden_size))
        layers.append(nn.LayerNorm(hidden_size))
        layers.append(nn.LeakyReLU())
    return nn.Sequential(*layers)


class DDSP(nn.Module):
    def __init__(self, hidden_size=32, n_harmonic=16):
        super().__init__()
        self.in_mlps = nn.ModuleList([mlp(1, hidden_size, 3)] * 2)  # <- CAUSE
        self.gru = nn.GRU(2 * hidden_size, hidden_size, batch_first=True)
        self.out_mlp = mlp(hidden_size + 2, hidden_size, 2)
        self.proj = nn.Linear(hidden_size, n_harmonic + 1)

    def forward(self, pitch, loudness):
        hidden = torch.cat([self.in_mlps[0](pitch), self.in_mlps[1](loudness)], -1)
        hidden = self.gru(hidden)[0]
        hidden = self.out_mlp(torch.cat([hidden, pitch, loudness], -1))
        return self.proj(hidden)


pitch = torch.rand(32, 20, 1)
loudness = torch.rand(32, 20, 1)
target = torch.cat([torch.sin(6 * pitch).repeat(1, 1, 16), loudness ** 2], -1)

model = DDSP()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

for step in range(10):
    idx = torch.randint(0, 32, (8,))
    loss = F.mse_loss(model(pitch[idx], loudness[idx]), target[idx])
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

print(f"final loss {loss.item():.4f}")
