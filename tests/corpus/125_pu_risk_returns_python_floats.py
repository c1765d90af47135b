"""Case 125 - non-negative PU risk estimator returns its risks as Python floats

Source: https://github.com/v-mipeng/LexiconNER/issues/7
        "AttributeError: 'float' object has no attribute 'backward'"
        (feature_pu_model.py: `(risk).backward()` on a value returned by the
        risk function; fixed by returning the four values as tensors)
Category: loss left torch (graph dropped by .item())

Reported symptom:
    AttributeError: 'float' object has no attribute 'backward'

Root cause:
    The positive-unlabeled risk function computes the non-negative risk
    correctly as a tensor, but returns `risk.item()` together with the
    logging values (accuracy, positive and negative risks).  .item() copies
    the number out of the graph: the training loop receives a float, which
    has no .backward().  The function should return the risk tensor and only
    convert the logged values.

Ground truth a good tool should report:
    `risk` returned at line 65 is `risk.item()`, a Python float with no graph;
    `risk.backward()` at line 79 fails.  The tensor risk built at lines 59-63
    is what must be returned.
    EXPECT: kind=loss_not_tensor; tensor=risk; cause_line=65; error_line=79

Observed (torch 2.13.0, CPU, this script):
    exit code: 1
    stdout:
        epoch 0: risk=0.4921 (type float)
    exception:
        AttributeError: 'float' object has no attribute 'backward'
"""
import torch
import torch.nn as nn

torch.manual_seed(0)

PRIOR = 0.3   # class prior of positives among unlabeled tokens
BETA, GAMMA = 0.0, 1.0


def sigmoid_loss(scores, sign):
    return torch.sigmoid(-sign * scores)


class TokenScorer(nn.Module):
    def __init__(self, n_feat=20):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_feat, 32), nn.Tanh(), nn.Linear(32, 1))

    def forward(self, x):
        return self.net(x).squeeze(-1)


def nn_pu_risk(scores, is_labeled_pos):
    pos, unl = scores[is_labeled_pos], scores[~is_labeled_pos]
    positive_risk = PRIOR * sigmoid_loss(pos, 1.0).mean()
    negative_risk = sigmoid_loss(unl, -1.0).mean() - PRIOR * sigmoid_loss(pos, -1.0).mean()
    if negative_risk.item() < -BETA:
        # non-negative correction: step back along the negative risk
        risk = -GAMMA * negative_risk
    else:
        risk = positive_risk + negative_risk
    acc = ((scores > 0) == is_labeled_pos).float().mean()
    return acc.item(), risk.item(), positive_risk.item(), negative_risk.item()  # <- CAUSE: risk.item() drops the graph


model = TokenScorer()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
features = torch.randn(64, 20)
is_labeled_pos = torch.zeros(64, dtype=torch.bool)
is_labeled_pos[:12] = True
features[:12] += 1.5

for epoch in range(3):
    optimizer.zero_grad()
    acc, risk, prisk, nrisk = nn_pu_risk(model(features), is_labeled_pos)
    print(f"epoch {epoch}: risk={risk:.4f} (type {type(risk).__name__})")
    risk.backward()  # <- ERROR
    optimizer.step()
print("PU training succeeded (bug not reproduced)")
