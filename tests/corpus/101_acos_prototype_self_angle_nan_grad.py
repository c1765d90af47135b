"""Case 101 - prototype spread regulariser: acos of the self-cosine (exactly 1.0) -> NaN gradient

Source: https://discuss.pytorch.org/t/numerically-stable-acos-dot-product-derivative/12851
        "Numerically stable acos dot product derivative?" (angle between two unit vectors via
        dot(...).clamp(-1.0, 1.0).acos() gives NaNs during training; the answer: clamp to
        (-1 + eps, 1 - eps) instead)
Category: nan-in-backward

Reported symptom:
    No error and a finite loss, but the gradients (and, after the step, the weights) are NaN.

Root cause:
    The regulariser builds the full cosine matrix of the L2-normalised class prototypes and
    takes acos of it, dropping the self-pairs (the diagonal) only afterwards with masked_fill.
    On the diagonal cos(p_i, p_i) rounds to exactly 1.0 for several prototypes (others land on
    0.99999994 or 1.0000001, the latter cut by the clamp).  AcosBackward0 computes
    grad * -1 / sqrt(1 - x^2); at x == 1 that is 0 * -inf = NaN even though the upstream
    gradient is 0 (the entry was masked out).  The NaN flows into MmBackward0 and every row of
    `prototypes.grad`.

Ground truth a good tool should report:
    Forward is finite.  Backward: the first NaN is produced by AcosBackward0 of the acos at
    line 58 (elements where the clamped cosine is exactly 1.0, the diagonal), masked
    afterwards by masked_fill; it reaches model.prototypes.grad.  Fix: clamp to
    (-1 + eps, 1 - eps), or drop the diagonal before acos.
    EXPECT: kind=nan_backward; nan_node=AcosBackward0; nan_node_line=58; cause_line=58;
            affected=prototypes.grad

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        loss = 3.982501745223999
        prototypes.grad has NaN: True
        prototypes have NaN after step: True
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
num_classes, feat_dim = 10, 32


class PrototypeClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, feat_dim))
        self.prototypes = nn.Parameter(torch.randn(num_classes, feat_dim))

    def forward(self, x):
        feats = F.normalize(self.backbone(x), dim=1)
        protos = F.normalize(self.prototypes, dim=1)
        return 10.0 * feats @ protos.t(), protos


def prototype_spread(protos):
    cos = protos @ protos.t()  # diagonal = cos(p_i, p_i), 1.0 up to rounding
    angles = torch.acos(cos.clamp(-1.0, 1.0))  # <- CAUSE,NAN: d/dx acos = -1/sqrt(1-x^2) is inf where cos == 1 exactly
    eye = torch.eye(len(protos), dtype=torch.bool)
    angles = angles.masked_fill(eye, float("inf"))  # self-angles dropped only after acos
    return -angles.min(dim=1).values.mean()  # push the nearest prototypes apart


model = PrototypeClassifier()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(16, 20)
y = torch.randint(0, num_classes, (16,))

logits, protos = model(x)
loss = F.cross_entropy(logits, y) + 0.1 * prototype_spread(protos)
print("loss =", loss.item())
opt.zero_grad()
loss.backward()
print("prototypes.grad has NaN:", torch.isnan(model.prototypes.grad).any().item())
opt.step()
print("prototypes have NaN after step:", torch.isnan(model.prototypes).any().item())
