"""Case 194 - a hand-written binary cross-entropy applied to raw logits.

Source: a frequent discuss.pytorch.org report (paraphrased): "loss is nan from the first
iteration" with a custom BCE.
Root cause: the model outputs logits (no sigmoid); log(p) of a negative logit is NaN. Use
binary_cross_entropy_with_logits or apply sigmoid first.
"""
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Linear(4, 1)
x, y = torch.randn(16, 4), torch.randint(0, 2, (16, 1)).float()
p = model(x)
loss = -(y * torch.log(p) + (1 - y) * torch.log(1 - p)).mean()  # <- CAUSE
loss.backward()
print(float(loss))  # <- NAN
