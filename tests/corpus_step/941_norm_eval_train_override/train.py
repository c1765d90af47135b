"""Case 941 - a backbone whose train() keeps its BatchNorm layers in eval mode (correct)

Source: https://mmdetection.readthedocs.io/en/latest/api.html (ResNet, norm_eval:
        "Whether to set norm layers to eval mode, namely, freeze running stats")
Category: correct (invariant 5)
EXPECT: no findings

Reported symptom:
    None. Fine-tuning with the backbone's BatchNorm statistics frozen.

Root cause:
    None. Backbone.train() re-freezes the norm layers each time; evaluate()
    switches the model to eval, and the next epoch's model.train() undoes it.

Ground truth a good tool should report:
    Nothing.
"""
import torch

from engine import evaluate, train_one_epoch
from model import Detector

torch.manual_seed(0)
x = torch.randn(576, 12)
y = x[:, :4].argmax(1)
batches = [(x[i:i + 64], y[i:i + 64]) for i in range(0, 512, 64)]

model = Detector()
optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)

for epoch in range(4):
    loss = train_one_epoch(model, optimizer, batches)
    acc = evaluate(model, x[512:], y[512:])
print(f"loss {loss:.4f}  val acc {acc:.3f}")
