"""A training loop whose optimizer never moves anything: lr comes from a config that
forgot to set it."""

import torch

config = {"lr": 0.0}
torch.manual_seed(0)
model = torch.nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=config["lr"])
for _ in range(3):
    optimizer.zero_grad()
    loss = model(torch.randn(8, 4)).pow(2).mean()
    loss.backward()
    optimizer.step()
