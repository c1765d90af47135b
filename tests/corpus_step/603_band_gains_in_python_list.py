"""Case 603 - per-octave gains kept in a plain Python list never train

Source: https://github.com/kymatio/murenn/issues/42
        "MuReNNDirect: Python list in torch.nn.Module"
Category: 6 - structure (registration, sharing, replacement)

Reported symptom:
    The learnable part of the multiresolution front end does not move during
    training; state_dict() and parameters() do not list it.

Root cause:
    The module keeps its per-octave learnable weights as nn.Parameter objects in a
    plain Python list. nn.Module registers Parameters assigned as attributes or held
    in nn.ParameterList / nn.ParameterDict, not those inside a list, so
    model.parameters() leaves them out: backward fills their .grad at every step and
    no optimizer applies it.

Ground truth a good tool should report:
    The Parameters in the plain list assigned at the `self.gains = [...]` line get
    gradients but are not registered in the module, so no optimizer holds them; use
    nn.ParameterList.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MultiResFrontEnd(nn.Module):
    def __init__(self, n_octaves=3, channels=8, kernel=9):
        super().__init__()
        self.convs = nn.ModuleList(
            [nn.Conv1d(1, channels, kernel, padding=kernel // 2) for _ in range(n_octaves)]
        )
        self.gains = [nn.Parameter(torch.ones(channels, 1)) for _ in range(n_octaves)]  # <- CAUSE

    def forward(self, x):
        feats = []
        for j, conv in enumerate(self.convs):
            y = conv(x) * self.gains[j]
            feats.append(y.abs().mean(-1))
            x = F.avg_pool1d(x, 2)
        return torch.cat(feats, 1)


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.front = MultiResFrontEnd()
        self.head = nn.Linear(24, 5)

    def forward(self, x):
        return self.head(self.front(x))


t = torch.linspace(0, 1, 256)
freqs = torch.randint(0, 5, (200,))
x = torch.sin(2 * torch.pi * (4 + 6 * freqs[:, None].float()) * t).unsqueeze(1)
x = x + 0.3 * torch.randn_like(x)

model = Classifier()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)

for step in range(20):
    idx = torch.randint(0, 200, (32,))
    loss = F.cross_entropy(model(x[idx]), freqs[idx])
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

print(f"final loss {loss.item():.4f}")
