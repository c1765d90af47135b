"""Case 174 - per-sample losses packed with torch.tensor(), which copies the values.

Source: a frequent discuss.pytorch.org report (paraphrased): "element 0 of tensors does
not require grad and does not have a grad_fn" after building a loss from a list.
Root cause: torch.tensor(list_of_tensors) makes a new leaf from their values; the graph is
cut there. torch.stack keeps it.
"""
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Linear(5, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(8, 5), torch.randn(8, 1)
per_sample = [nn.functional.mse_loss(model(x[i]), y[i]) for i in range(8)]
loss = torch.tensor(per_sample).mean()  # <- CAUSE
opt.zero_grad()
loss.backward()  # <- ERROR
opt.step()
