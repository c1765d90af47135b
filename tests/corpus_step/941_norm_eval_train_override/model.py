"""Case 941 - a backbone whose train() keeps its BatchNorm layers in eval mode (correct)

Source: https://mmdetection.readthedocs.io/en/latest/api.html (ResNet, norm_eval:
        "Whether to set norm layers to eval mode, namely, freeze running stats
        (mean and var). Note: Effect on Batch Norm and its variants only.")
Category: correct (invariant 5)
EXPECT: no findings

Reported symptom:
    None. Detection backbones fine-tuned with small batches keep the pretrained
    BatchNorm statistics: the backbone overrides train() to put its norm
    layers back in eval mode every time the model is switched to training.

Root cause:
    None. The eval() calls happen inside train(), before any training step of
    each epoch, on purpose; a validation helper switches the whole model to eval
    and the epoch function calls model.train() (which re-freezes the norms).

Ground truth a good tool should report:
    Nothing: the BatchNorm layers are in eval mode on purpose from the start.
"""
import torch.nn as nn


class Backbone(nn.Module):
    def __init__(self, norm_eval=True):
        super().__init__()
        self.norm_eval = norm_eval
        self.body = nn.Sequential(nn.Linear(12, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Linear(32, 32))

    def train(self, mode=True):
        super().train(mode)
        if mode and self.norm_eval:
            for m in self.modules():
                if isinstance(m, nn.BatchNorm1d):
                    m.eval()
        return self

    def forward(self, x):
        return self.body(x)


class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = Backbone()
        self.head = nn.Sequential(nn.Dropout(0.2), nn.Linear(32, 4))

    def forward(self, x):
        return self.head(self.backbone(x))
