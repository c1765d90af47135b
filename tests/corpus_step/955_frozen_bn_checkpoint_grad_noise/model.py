"""Case 955 - checkpointed backbone with frozen BatchNorm, gradient noise in hooks (correct)

Source: https://github.com/facebookresearch/fairscale/issues/1035
        (running statistics and checkpointing: a checkpointed BatchNorm in train mode
        updates its statistics on the rerun; frozen ones do not)
Category: correct (invariant 7)
EXPECT: no findings

Root cause:
    None. Backbone.train() keeps its BatchNorm layers in eval mode (pretrained
    statistics, frozen on purpose), so the checkpoint's recomputation in
    backward reads the running statistics without updating them.
"""
import torch.nn as nn
from torch.utils.checkpoint import checkpoint


class Stage(nn.Module):
    def __init__(self, c_in, c_out):
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(c_out)

    def forward(self, x):
        return self.bn(self.conv(x)).relu()


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.stages = nn.ModuleList([Stage(3, 8), Stage(8, 16)])

    def train(self, mode=True):
        super().train(mode)
        for m in self.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.eval()
        return self

    def forward(self, x):
        for stage in self.stages:
            x = checkpoint(stage, x, use_reentrant=False)
        return x.mean((2, 3))


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = Backbone()
        self.head = nn.Sequential(nn.Dropout(0.2), nn.Linear(16, 5))

    def forward(self, x):
        return self.head(self.backbone(x))
