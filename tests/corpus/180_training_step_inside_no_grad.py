"""Case 180 - the training step placed inside the no_grad block meant for logging.

Source: a frequent discuss.pytorch.org report (paraphrased): "element 0 of tensors does not
require grad and does not have a grad_fn" after adding a metric block.
Root cause: the forward runs under torch.no_grad(); nothing is recorded for backward.
"""
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 2))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(2):
    x, y = torch.randn(8, 5), torch.randint(0, 2, (8,))
    with torch.no_grad():  # <- CAUSE
        logits = model(x)
        accuracy = (logits.argmax(1) == y).float().mean()
        loss = nn.functional.cross_entropy(logits, y)
    opt.zero_grad()
    loss.backward()  # <- ERROR
    opt.step()
    print(float(accuracy))
