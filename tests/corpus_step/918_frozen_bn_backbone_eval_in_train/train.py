"""Case 918 - frozen backbone kept in eval mode while the head trains (correct)

Source: https://github.com/Megvii-BaseDetection/YOLOX/issues/121
        "I have to manually add some \"requires_grad\" options and consider batchnorm when I want to freeze some certain layers."
Category: correct (invariant 5)
EXPECT: no findings

Reported symptom:
    None. Fine-tuning a head on a frozen backbone that contains BatchNorm.

Root cause:
    None. Trainer.train_epoch() calls model.train() and then, deliberately,
    model.backbone.eval() so that the frozen BatchNorm layers keep their
    pretrained running statistics; the backbone's parameters have
    requires_grad=False and are not given to the optimizer. The mode switch is
    re-applied at the start of every epoch, after evaluation.

Ground truth a good tool should report:
    Nothing. A submodule in eval mode during training is intended here.
"""
import torch

from model import Detector
from trainer import Trainer

torch.manual_seed(0)

x = torch.randn(640, 12)
y = (x[:, :3]).argmax(1)
batches = [(x[i:i + 64], y[i:i + 64]) for i in range(0, 512, 64)]

model = Detector()
with torch.no_grad():
    model(x[:256])  # "pretraining" pass that fills the BatchNorm statistics
trainer = Trainer(model)
stats_before = model.backbone[1].running_mean.clone()

losses = []
for epoch in range(4):
    losses.append(trainer.train_epoch(batches))
    acc = trainer.evaluate(x[512:], y[512:])

assert torch.equal(model.backbone[1].running_mean, stats_before)
print(f"loss {losses[0]:.4f} -> {losses[-1]:.4f}  val acc {acc:.3f}")
