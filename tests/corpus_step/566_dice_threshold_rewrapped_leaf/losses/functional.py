import torch


def threshold(x, threshold=None):
    if threshold is None:
        return x
    return torch.tensor((x > threshold).type(x.dtype), requires_grad=True)  # <- CAUSE


def dice(pr, gt, eps=1.0, threshold_value=None):
    pr = threshold(pr, threshold_value)
    tp = (pr * gt).sum()
    return (2 * tp + eps) / (pr.sum() + gt.sum() + eps)
