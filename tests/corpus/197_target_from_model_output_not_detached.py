"""Case 197 - a self-training target computed from the model's own output without detaching
it.

Source: a frequent report (paraphrased): "pseudo-label loss collapses" / the target carries
gradient.
Root cause: the soft target is the model's own softmax output; gradients flow through both
sides of the loss and the model learns to move the target. Detach it (or compute it under
no_grad).
"""
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Linear(5, 3)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    x = torch.randn(16, 5)
    logits = model(x)
    target = torch.softmax(logits / 0.5, dim=1)  # <- CAUSE
    loss = nn.functional.kl_div(torch.log_softmax(logits, dim=1), target, reduction="batchmean")
    opt.zero_grad()
    loss.backward()
    opt.step()
print(float(loss))
