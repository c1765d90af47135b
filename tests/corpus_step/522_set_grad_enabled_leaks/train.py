"""Case 522 - evaluation helper turns grad mode off globally and never turns it back on

Source: https://github.com/pytorch/pytorch/issues/113298
        "unexpectedly, this mutates the grad mode!"
Category: 5 - global switches are scoped

Reported symptom:
    The loss falls during the first epoch and is flat afterwards. An earlier
    "element 0 of tensors does not require grad" error had been silenced by
    forcing requires_grad on the loss, so nothing crashes.

Root cause:
    evaluate() calls torch.set_grad_enabled(False) as a plain function call: it
    sets the process-wide grad mode and is never reverted (a `with` block or the
    decorator form would restore it). Every forward after the first evaluation
    builds no graph; the loss is a detached leaf, backward reaches no parameter
    and the optimizer steps with no gradients.

Ground truth a good tool should report:
    From the second epoch on, training forwards run with grad mode disabled and no
    parameter gets a gradient. Grad mode was switched off and left off by
    `torch.set_grad_enabled(False)` in utils/evaluation.py.
"""
import torch
import torch.nn as nn

from trainer import Trainer
from utils.evaluation import evaluate

torch.manual_seed(0)

x = torch.randn(600, 12)
y = (x[:, :3] @ torch.tensor([1.0, -2.0, 0.5]) > 0).long()
x_val, y_val = x[500:], y[500:]

model = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 2))
trainer = Trainer(model, torch.optim.SGD(model.parameters(), lr=0.1))

for epoch in range(4):
    for i in range(0, 500, 50):
        loss = trainer.train_step(x[i:i + 50], y[i:i + 50])
    acc = evaluate(model, x_val, y_val)
    print(f"epoch {epoch}: loss {loss:.4f}  val acc {acc:.3f}")
print(f"final loss {loss:.4f}")
