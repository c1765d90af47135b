"""Case 534 - triplet loss computed in NumPy, then forced to require grad

Source: https://github.com/roman-vygon/triplet_loss_kws/issues/6
        "In pytorch, you need set loss.requres_grad = True."
Category: 8 - tensors that require grad do not leave autograd silently

Reported symptom:
    Training first failed with "Torch autograd expects Variable with requires_grad
    set to True"; after setting mean_losses.requires_grad = True (the suggested
    fix) it runs, but the embedding network does not learn and the loss stays flat.

Root cause:
    BatchHardTripletLoss converts the embeddings to NumPy to mine the hardest
    positive/negative and computes the margin loss there. The value that comes
    back is a new tensor with no history; marking it requires_grad=True makes it
    a leaf, so backward never reaches the embedding network.

Ground truth a good tool should report:
    The loss is disconnected from every model parameter: the embeddings leave
    autograd through `.detach().numpy()` in losses/triplet.py (the
    `emb = embeddings.detach().cpu().numpy()` line); requires_grad=True on the
    result only hides the break.
"""
import numpy as np
import torch


class BatchHardTripletLoss:
    def __init__(self, margin=0.5):
        self.margin = margin

    def __call__(self, embeddings, labels):
        emb = embeddings.detach().cpu().numpy()  # <- CAUSE
        lab = labels.cpu().numpy()
        dist = np.sqrt(((emb[:, None, :] - emb[None, :, :]) ** 2).sum(-1) + 1e-12)
        same = lab[:, None] == lab[None, :]
        hardest_pos = np.where(same, dist, 0.0).max(1)
        hardest_neg = np.where(same, np.inf, dist).min(1)
        losses = torch.from_numpy(np.maximum(hardest_pos - hardest_neg + self.margin, 0.0)).float()
        mean_losses = losses.mean()
        mean_losses.requires_grad = True
        return mean_losses
