"""Case 915 - loss.item() and NumPy used only for logging and metrics (correct)

Source: https://github.com/isayev/ReLeaSE/issues/39
        "your changes detach `rl_loss` from the computational graph and there is nothing to backpropagate"
Category: correct (invariant 8)
EXPECT: no findings

Reported symptom:
    None. The loop keeps a running loss with .item(), computes accuracy and a
    confusion matrix in NumPy from detached predictions, and stores a float
    history.

Root cause:
    None. backward() is called on the loss tensor itself; .item(), .detach() and
    .numpy() are only applied to copies used for reporting, so nothing that
    feeds the optimizer leaves autograd.

Ground truth a good tool should report:
    Nothing.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

x = torch.randn(600, 8)
y = (x[:, :3]).argmax(1)
model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 3))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)

history = []
running = 0.0
confusion = np.zeros((3, 3), dtype=np.int64)
for step in range(30):
    idx = torch.randint(0, 600, (64,))
    logits = model(x[idx])
    loss = F.cross_entropy(logits, y[idx])
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

    running = 0.9 * running + 0.1 * loss.item()
    history.append(float(loss.detach()))
    preds = logits.detach().argmax(1).numpy()
    np.add.at(confusion, (y[idx].numpy(), preds), 1)

acc = np.trace(confusion) / confusion.sum()
print(f"loss {history[0]:.4f} -> {history[-1]:.4f}  running {running:.4f}  acc {acc:.3f}")
