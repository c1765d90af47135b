"""Case 107 - hand-written focal BCE: log(1 - sigmoid(x)) with sigmoid(x) == 1.0 -> inf loss, NaN grads

Source: https://github.com/slryou41/AnchorLoss/issues/2
        "Question on the logpt_neg param" ("when we used log operation on top of the output
        directly (not using the functions from PyTorch e.g. F.logsigmoid), it sometimes
        generated 'NaN'. We added an epsilon term ... but I'd recommend using the internal
        functions.")
Category: inf-in-forward

Reported symptom:
    The custom focal loss is inf and the gradients are NaN for a batch with a very confident
    cell.

Root cause:
    The heat-map head sees raw 0..255 pixels, so some logits are large; for x > ~17
    torch.sigmoid(x) rounds to exactly 1.0 in float32 and torch.log(1 - p) = log(0) = -inf.
    At a negative cell that term is weighted by (1 - target) * p ** gamma = 1, so the loss
    is +inf.  In backward LogBackward0 divides by 0 (inf) and SigmoidBackward0 multiplies
    that by p * (1 - p) = 0, giving NaN in every conv weight gradient.

Ground truth a good tool should report:
    First non-finite value in forward: -inf from `torch.log(1 - p)` at line 52 (p == 1.0
    exactly).  Backward: NaN first produced by SigmoidBackward0 of line 50 (inf * 0); reaches
    head.0.weight.grad.  Fix: use F.logsigmoid(-logits) / F.logsigmoid(logits) (or
    binary_cross_entropy_with_logits), or clamp p.
    EXPECT: kind=inf_forward; first_inf_line=52; cause_line=52; nan_node=SigmoidBackward0;
            nan_node_line=50; affected=0.weight.grad

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        logits range -61.8 .. 20.7; cells with sigmoid == 1.0: 1
        loss = inf
        conv weight grad has NaN: True
"""
import torch
import torch.nn as nn

torch.manual_seed(0)


class FocalBCE(nn.Module):
    """Hand-written focal binary cross-entropy on probabilities."""

    def __init__(self, gamma=2.0):
        super().__init__()
        self.gamma = gamma

    def forward(self, logits, target):
        p = torch.sigmoid(logits)  # <- NAN: backward: SigmoidBackward multiplies the inf from log(0) by p * (1 - p) = 0
        log_p = torch.log(p)
        log_not_p = torch.log(1 - p)  # <- CAUSE,INF: sigmoid(x) rounds to exactly 1.0 for x > ~17 -> log(0) = -inf
        pos = target * (1 - p) ** self.gamma * log_p
        neg = (1 - target) * p ** self.gamma * log_not_p
        return -(pos + neg).mean()


# keypoint heat-map head: one logit per grid cell, ~10% of the cells are positives
head = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 1, 1))
images = torch.randint(0, 256, (2, 3, 12, 12)).float()  # raw 8-bit pixels fed straight in
heatmap = (torch.rand(2, 1, 12, 12) < 0.1).float()

logits = head(images)
p = torch.sigmoid(logits.detach())
print(f"logits range {logits.min().item():.1f} .. {logits.max().item():.1f}; "
      f"cells with sigmoid == 1.0: {(p == 1).sum().item()}")
loss = FocalBCE()(logits, heatmap)
print("loss =", loss.item())
loss.backward()
print("conv weight grad has NaN:", torch.isnan(head[0].weight.grad).any().item())
