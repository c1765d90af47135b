"""Case 945 - MoE balance losses gathered with torch.stack, logged as floats (correct)

Source: https://github.com/laekov/fastmoe/issues/49
        "We should use `torch.cat` instead"
Category: correct (invariant 8)
EXPECT: no findings

Reported symptom:
    None. Each mixture-of-experts layer keeps a load-balancing loss; a helper
    stacks them into one term added to the task loss, and a per-layer table of
    their values is kept for the logs.

Root cause:
    None. torch.stack keeps the graph of every per-layer loss, so the gates are
    trained by the balance term. The logging table is built with
    torch.tensor([l.item() ...]) from Python floats: it is data and never
    enters the loss.

Ground truth a good tool should report:
    Nothing.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from moe.balance import balance_loss, balance_table
from moe.layers import MoEBlock

torch.manual_seed(0)


class Classifier(nn.Module):
    def __init__(self, d_in=16, d_model=32, n_classes=4):
        super().__init__()
        self.inp = nn.Linear(d_in, d_model)
        self.blocks = nn.ModuleList([MoEBlock(d_model) for _ in range(2)])
        self.out = nn.Linear(d_model, n_classes)

    def forward(self, x):
        h = self.inp(x)
        for block in self.blocks:
            h = block(h)
        return self.out(h)


model = Classifier()
optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
x_all = torch.randn(512, 16)
y_all = (x_all[:, :4].argmax(1) + (x_all[:, 4] > 0).long()) % 4

tables = []
for step in range(40):
    idx = torch.randint(0, 512, (64,))
    logits = model(x_all[idx])
    task = F.cross_entropy(logits, y_all[idx])
    loss = task + 0.1 * balance_loss(model)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    tables.append(balance_table(model))

print(f"task loss {task.item():.4f}  per-layer balance {tables[-1].tolist()}")
