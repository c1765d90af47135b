"""Correct 307 - Chamfer loss with padded ground truth filled with inf, dropped by min / indexing

Category: correct (numerics: intentional inf constants)
What it is:
    A point-set predictor is trained with a Chamfer distance against ground-truth sets of
    different sizes.  Distances to padded ground-truth points are masked_fill'ed with
    float('inf') so they are never the nearest point; the pred->gt minimum always has a
    finite candidate (every sample has at least one real point) and the gt->pred minima of
    the padded columns (inf) are removed by boolean indexing, not by multiplying with a
    mask.  best_loss starts at float('inf') for early-stopping bookkeeping.
Why a naive tool might flag it:
    inf values inside the autograd graph and in a tensor whose min is differentiated; the
    infs never reach the loss (min and indexing route zero gradient to them, masked_fill
    zeroes it), so all gradients are finite.
Ground truth a good tool should report:
    EXPECT: no findings (correct training code: inf padding that never reaches a gradient)

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        step 0: chamfer 1.5105
        step 1: chamfer 1.0707
        step 2: chamfer 0.7882
        step 3: chamfer 0.6081
        step 4: chamfer 0.5356
        step 5: chamfer 0.4790
        step 6: chamfer 0.3984
        step 7: chamfer 0.3153
        best 0.3153 at step 7; grads finite: True
"""
import torch
import torch.nn as nn

torch.manual_seed(0)
P, G = 6, 5  # predicted points per sample, max ground-truth points per sample


class PointSetPredictor(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(10, 64), nn.ReLU(), nn.Linear(64, P * 2))

    def forward(self, x):
        return self.net(x).view(-1, P, 2)


def chamfer(pred, gt, gt_valid):
    d = ((pred[:, :, None, :] - gt[:, None, :, :]) ** 2).sum(-1)  # (B, P, G)
    d = d.masked_fill(~gt_valid[:, None, :], float("inf"))  # padding can never be the nearest point
    pred_to_gt = d.min(dim=2).values  # every sample has >= 1 real point, so this is finite
    gt_to_pred = d.min(dim=1).values  # inf in the padded columns ...
    return pred_to_gt.mean() + gt_to_pred[gt_valid].mean()  # ... which are dropped by indexing


counts = torch.tensor([5, 2, 4, 1])
gt = torch.randn(4, G, 2)
gt_valid = torch.arange(G)[None, :] < counts[:, None]
gt = gt.masked_fill(~gt_valid[..., None], 0.0)
x = torch.randn(4, 10)

model = PointSetPredictor()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
best_loss, best_step = float("inf"), -1  # early-stopping bookkeeping
for step in range(8):
    loss = chamfer(model(x), gt, gt_valid)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if loss.item() < best_loss:
        best_loss, best_step = loss.item(), step
    print(f"step {step}: chamfer {loss.item():.4f}")
print(f"best {best_loss:.4f} at step {best_step}; grads finite:",
      all(torch.isfinite(p.grad).all().item() for p in model.parameters()))
