"""Case 564 - MoE load-balancing loss gathered with torch.tensor(list) trains nothing

Source: https://github.com/laekov/fastmoe/issues/49
        "`torch.tensor(loss_list)` will remove the `grad_fn` of each loss."
Category: 8 - tensors that require grad do not leave autograd silently

Reported symptom:
    Training runs and the task loss falls, but the experts stay unbalanced: the
    gate keeps sending most tokens to one expert, whatever the weight given to
    the balance loss. The balance loss value is logged and looks right.

Root cause:
    Each MoE layer computes a differentiable load-balancing loss from its gate
    probabilities. A helper gathers the per-layer values into one tensor with
    torch.tensor(list_of_losses), which copies the numbers and drops their
    autograd history. The total loss is task loss + coef * balance, so backward
    runs without error, but the balance term is a constant: it changes the loss
    value and nothing else.

Ground truth a good tool should report:
    The balance term carries no gradient: its values left autograd at the
    `torch.tensor(losses)` line in moe/balance.py (use torch.stack).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from moe.balance import balance_loss
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

for step in range(40):
    idx = torch.randint(0, 512, (64,))
    logits = model(x_all[idx])
    task = F.cross_entropy(logits, y_all[idx])
    loss = task + 0.1 * balance_loss(model)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

print(f"task loss {task.item():.4f}  total {loss.item():.4f}")
