import numpy as np
import torch


class BatchHardTripletLoss:
    def __init__(self, margin=0.5):
        self.margin = margin

    def __call__(self, embeddings, labels):
        dist = torch.cdist(embeddings, embeddings)
        d = dist.detach().cpu().numpy()
        lab = labels.cpu().numpy()
        same = lab[:, None] == lab[None, :]
        pos_idx = np.where(same, d, -np.inf).argmax(1)
        neg_idx = np.where(same, np.inf, d).argmin(1)
        rows = torch.arange(len(lab))
        hardest_pos = dist[rows, torch.from_numpy(pos_idx)]
        hardest_neg = dist[rows, torch.from_numpy(neg_idx)]
        losses = torch.relu(hardest_pos - hardest_neg + self.margin)
        active = int((losses > 0).sum().tolist())
        return losses.mean(), active
