"""Case 504 - freeze helper builds its keep-trainable set from checkpoint keys and freezes the new head

Source: https://github.com/Project-MONAI/MONAI/pull/6970
        "this doesn't seem to match the docstring"
Category: 1 - every parameter the optimizer holds can get a gradient

Reported symptom:
    Fine-tuning a pretrained backbone with a new classification head: the loss
    stalls high, the head keeps its random initial weights; only a few
    normalisation parameters change.

Root cause:
    freeze_layers() decides which parameters stay trainable by matching the
    exclude pattern against the keys of the *pretrained state dict* instead of the
    model's own parameter names. The freshly added head is not in the
    checkpoint, so it never matches and gets requires_grad=False, while the
    optimizer still holds it.

Ground truth a good tool should report:
    head.weight and head.bias are held by the optimizer but have requires_grad
    False (never get a gradient); they were frozen in utils/freeze.py where the
    trainable set is built from src_dict keys (the `to_exclude = ...` line).
"""
import torch
import torch.nn.functional as F

from model import Backbone, Classifier
from utils.freeze import freeze_layers

torch.manual_seed(0)

pretrained = Backbone()
src_dict = {"backbone." + k: v for k, v in pretrained.state_dict().items()}

model = Classifier()
model.load_state_dict(src_dict, strict=False)
frozen = freeze_layers(model, src_dict, exclude_vars=r"head|norm")

optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)

x = torch.randn(256, 16)
y = (x[:, :5] * torch.arange(1, 6)).argmax(1)

for step in range(30):
    idx = torch.randint(0, 256, (64,))
    loss = F.cross_entropy(model(x[idx]), y[idx])
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

print(f"frozen {len(frozen)} tensors, head trainable: {model.head.weight.requires_grad}")
print(f"final loss {loss.item():.4f}")
