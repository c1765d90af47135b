"""Case 183 - the classifier head replaced for a new number of classes after the optimizer
was built: the new head is never updated.

Source: a frequent discuss.pytorch.org report (paraphrased): "fine-tuning, the new fc layer
does not change".
Root cause: the optimizer holds the old head's parameters; the new head's gradients are
computed and never applied. Build the optimizer after replacing the head.
"""
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.1)  # <- CAUSE
model[2] = nn.Linear(16, 3)  # <- CREATED
for step in range(3):
    x, y = torch.randn(8, 8), torch.randint(0, 3, (8,))
    loss = nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
print(float(loss))
