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
import torch.nn.functional as F


class Trainer:
    def __init__(self, model, lr=5e-3):
        self.model = model
        self.model.freeze_backbone()
        self.optimizer = torch.optim.Adam(self.model.head.parameters(), lr=lr)

    def train_epoch(self, batches):
        self.model.train()
        self.model.backbone.eval()
        for x, y in batches:
            loss = F.cross_entropy(self.model(x), y)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
        return loss.item()

    @torch.no_grad()
    def evaluate(self, x, y):
        self.model.eval()
        return (self.model(x).argmax(1) == y).float().mean().item()
