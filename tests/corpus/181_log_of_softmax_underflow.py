"""Case 181 - log of a softmax whose probabilities underflow to exactly 0.

Source: a frequent discuss.pytorch.org report (paraphrased): "loss becomes inf/nan with
large logits" for a hand-written cross-entropy.
Root cause: softmax of large logits gives exact zeros; log(0) = -inf, and the loss and
gradients become non-finite. Use log_softmax (or cross_entropy).
"""
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Linear(4, 3)
with torch.no_grad():
    model.weight.mul_(200.0)
x, y = torch.randn(8, 4), torch.randint(0, 3, (8,))
probs = torch.softmax(model(x), dim=1)
log_probs = torch.log(probs)  # <- CAUSE
loss = -log_probs.gather(1, y[:, None]).mean()
loss.backward()
print(float(loss), model.weight.grad)  # <- NAN
