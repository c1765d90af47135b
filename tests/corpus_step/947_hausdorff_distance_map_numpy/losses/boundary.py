import numpy as np
import torch


def distance_field(masks):
    """Distance of each pixel to the nearest foreground pixel (brute force, small maps)."""
    out = np.zeros_like(masks)
    for b in range(masks.shape[0]):
        fg = np.argwhere(masks[b, 0] > 0.5)
        if len(fg) == 0:
            continue
        h, w = masks.shape[2:]
        grid = np.stack(np.meshgrid(np.arange(h), np.arange(w), indexing="ij"), -1)
        d = np.sqrt(((grid[:, :, None, :] - fg[None, None, :, :]) ** 2).sum(-1)).min(-1)
        out[b, 0] = d
    return out


class HausdorffDTLoss:
    def __init__(self, alpha=2.0):
        self.alpha = alpha

    def __call__(self, pred, target):
        with torch.no_grad():
            pred_dt = torch.from_numpy(distance_field(pred.detach().cpu().numpy())).float()
            target_dt = torch.from_numpy(distance_field(target.cpu().numpy())).float()
        error = (pred - target) ** 2
        weight = pred_dt**self.alpha + target_dt**self.alpha
        return (error * weight).mean()


def dice_score(pred, target, eps=1.0):
    hard = (pred > 0.5).float()
    return (2 * (hard * target).sum() + eps) / (hard.sum() + target.sum() + eps)
