"""Case 182 - the encoder's output detached inside forward, left from a debugging session.

Source: a frequent discuss.pytorch.org report (paraphrased): "the first layers of my
model do not learn, their .grad is None".
Root cause: `h = h.detach()` in forward cuts the graph between encoder and decoder: the
encoder's parameters never get a gradient.
"""
import torch
from torch import nn


class AutoEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(10, 4), nn.ReLU())
        self.decoder = nn.Linear(4, 10)

    def forward(self, x):
        h = self.encoder(x)
        h = h.detach()  # <- CAUSE
        return self.decoder(h)


torch.manual_seed(0)
model = AutoEncoder()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(3):
    x = torch.randn(16, 10)
    loss = nn.functional.mse_loss(model(x), x)
    opt.zero_grad()
    loss.backward()
    opt.step()
print(model.encoder[0].weight.grad)  # <- READ
