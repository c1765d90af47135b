"""Case 173 - a running loss kept as a tensor and backpropagated every iteration.

Source: a frequent discuss.pytorch.org report (paraphrased): "Trying to backward through
the graph a second time" in a plain training loop.
Root cause: `running = running + loss` keeps every iteration's graph; the next backward
goes through the previous (freed) graph. The line to change is the accumulation (use
`loss.item()` or `loss.detach()`).
"""
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
running = torch.zeros(())
for step in range(3):
    x, y = torch.randn(16, 4), torch.randn(16, 1)
    loss = nn.functional.mse_loss(model(x), y)
    running = running + loss  # <- CAUSE
    opt.zero_grad()
    (running / (step + 1)).backward()  # <- ERROR
    opt.step()
print(float(running))
