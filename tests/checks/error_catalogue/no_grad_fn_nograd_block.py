"""element 0 of tensors does not require grad: the forward ran under torch.no_grad()."""

import torch

model = torch.nn.Linear(3, 1)
x = torch.randn(4, 3)
with torch.no_grad():  # <- CAUSE
    out = model(x)
loss = out.pow(2).mean()
loss.backward()  # <- ERROR
