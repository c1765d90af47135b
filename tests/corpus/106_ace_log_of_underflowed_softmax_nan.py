"""Case 106 - aggregation cross-entropy: log of a class probability that underflowed to 0 -> NaN

Source: https://github.com/summerlvsong/Aggregation-Cross-Entropy/issues/2
        "Need Help! Loss nan" ("If k-th class does not show in an input, the accumulative
        softmax score of all time steps for k-th class is very likely to be 0. Then this will
        result into torch.log(input) = nan.")
Category: nan-in-forward

Reported symptom:
    Training a text-line recogniser with ACE: the first step is fine, the second loss is
    nan and so are all gradients.

Root cause:
    The recogniser is fed raw 0..255 pixel columns, so after one Adam step the logits span
    hundreds.  For a class that is far below the maximum at every time step the softmax
    underflows to exactly 0.0, so its aggregated probability is 0 and torch.log gives -inf.
    That class is absent from the label, its target frequency is 0, and 0 * -inf = NaN in
    the loss.  (Backward: LogBackward0 divides by 0 as well.)

Ground truth a good tool should report:
    First non-finite value in forward: -inf from `torch.log(agg)` at line 61
    (aggregated probability exactly 0 after softmax underflow), at step 1.  First NaN: the
    product `target * log_agg` at line 62 (0 * -inf).  Fix: log(agg.clamp(min=eps)) or
    compute the aggregation in log space (logsumexp of log_softmax).
    EXPECT: kind=nan_forward; first_inf_line=61; first_nan_line=62; cause_line=61;
            nan_op=mul; step=1

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        step 0: loss = 30.553844451904297, logit range -77.0 .. 61.8
        step 1: loss = nan, logit range -201.6 .. 121.6
        cls.weight.grad has NaN: True
"""
import torch
import torch.nn as nn

torch.manual_seed(0)
n_classes, T = 6, 10  # class 0 = blank


class LineRecognizer(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(32, 64, kernel_size=3, padding=1)
        self.cls = nn.Linear(64, n_classes)

    def forward(self, x):  # x: (B, 32, T) column features of a text line
        h = torch.relu(self.conv(x)).transpose(1, 2)
        return self.cls(h)  # (B, T, n_classes)


def ace_loss(logits, label_counts):
    """Aggregation cross-entropy: compare per-class counts with softmax mass summed over time."""
    B, T_, C = logits.shape
    probs = logits.softmax(dim=-1)
    agg = probs.sum(dim=1) / T_  # predicted class frequencies
    target = label_counts.clone().float()
    target[:, 0] = T_ - label_counts[:, 1:].sum(dim=1)  # the rest of the time steps are blank
    target = target / T_
    log_agg = torch.log(agg)  # <- CAUSE,INF: a class whose softmax underflowed to 0 at every step -> log(0) = -inf
    return -(target * log_agg).sum(dim=1).mean()  # <- NAN: 0 * (-inf) for classes absent from the label


net = LineRecognizer()
columns = torch.randint(0, 256, (2, 32, T)).float()  # raw 0..255 pixel columns, not rescaled
label_counts = torch.tensor([[0, 2, 1, 0, 0, 1], [0, 0, 3, 1, 0, 0]])

opt = torch.optim.Adam(net.parameters(), lr=1e-2)
for step in range(40):
    logits = net(columns)
    loss = ace_loss(logits, label_counts)
    opt.zero_grad()
    loss.backward()
    print(f"step {step}: loss = {loss.item()}, logit range {logits.min().item():.1f} .. {logits.max().item():.1f}")
    if not torch.isfinite(loss):
        break
    opt.step()
print("cls.weight.grad has NaN:", torch.isnan(net.cls.weight.grad).any().item())
