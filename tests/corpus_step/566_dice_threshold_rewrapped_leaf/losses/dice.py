import torch.nn as nn

from losses import functional


class DiceLoss(nn.Module):
    def __init__(self, eps=1.0, threshold=None):
        super().__init__()
        self.eps = eps
        self.threshold = threshold

    def forward(self, pr, gt):
        return 1 - functional.dice(pr, gt, eps=self.eps, threshold_value=self.threshold)
