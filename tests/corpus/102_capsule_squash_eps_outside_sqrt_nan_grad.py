"""Case 102 - capsule squash: epsilon added after the square root, zero capsule -> NaN gradient

Source: https://github.com/jindongwang/Pytorch-CapsuleNet/issues/7
        "Undefined Gradients due to division by zero." (squash divides by
        torch.sqrt(squared_norm); the suggested fix moves the epsilon inside the sqrt)
Category: nan-in-backward

Reported symptom:
    Capsule network trains with finite losses, then the gradients / weights become NaN.

Root cause:
    The squash here already guards the division with `norm + 1e-8`, so the forward pass
    stays finite for a zero capsule (0 * 0 / 1e-8 = 0).  But the epsilon sits outside the
    square root: for a blank input image every primary capsule is exactly the zero vector
    (the primary layer has no bias), sq_norm = 0 and PowBackward0 of `sq_norm.pow(0.5)`
    computes grad * 0.5 * 0 ** -0.5 = 0 * inf = NaN.  The NaN spreads through the routing
    into `primary.weight.grad` and `W.grad`.

Ground truth a good tool should report:
    Forward is finite (the loss is finite).  Backward: the first NaN is produced by
    PowBackward0 of `sq_norm.pow(0.5)` at line 42 for the zero capsules of image 2 (created
    at line 66); it reaches net.primary.weight.grad and net.W.grad.  Fix:
    (sq_norm + eps).sqrt().
    EXPECT: kind=nan_backward; nan_node=PowBackward0; nan_node_line=42; cause_line=42;
            created_line=66; affected=primary.weight.grad

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        loss = 0.8059443831443787 (finite)
        primary.weight.grad has NaN: True
        W.grad has NaN: True
"""
import torch
import torch.nn as nn

torch.manual_seed(0)


def squash(s, dim=-1):
    sq_norm = (s ** 2).sum(dim=dim, keepdim=True)
    norm = sq_norm.pow(0.5)  # <- CAUSE,NAN: d/dx x**0.5 = inf at x == 0 (zero capsule); the eps below comes too late
    return (sq_norm / (1.0 + sq_norm)) * s / (norm + 1e-8)


class TinyCapsNet(nn.Module):
    def __init__(self, in_dim=64, n_primary=8, pdim=4, n_classes=3, cdim=6):
        super().__init__()
        self.n_primary, self.pdim = n_primary, pdim
        self.primary = nn.Linear(in_dim, n_primary * pdim, bias=False)
        self.W = nn.Parameter(0.1 * torch.randn(n_classes, n_primary, cdim, pdim))

    def forward(self, x):
        u = squash(self.primary(x).view(-1, self.n_primary, self.pdim))
        u_hat = torch.einsum("jicd,bid->bjic", self.W, u)
        logits_b = torch.zeros(u_hat.shape[:3])
        for _ in range(3):  # dynamic routing
            c = logits_b.softmax(dim=1)
            v = squash((c.unsqueeze(-1) * u_hat).sum(dim=2))
            logits_b = logits_b + (u_hat * v.unsqueeze(2)).sum(-1)
        return v.norm(dim=-1)


net = TinyCapsNet()
images = torch.rand(4, 64)
images[2] = 0.0  # <- CREATED: a blank (all-black) image -> every primary capsule of it is the zero vector
labels = torch.tensor([0, 1, 2, 1])

lengths = net(images)
margin = torch.relu(0.9 - lengths).pow(2) * nn.functional.one_hot(labels, 3) \
    + 0.5 * torch.relu(lengths - 0.1).pow(2) * (1 - nn.functional.one_hot(labels, 3))
loss = margin.sum(1).mean()
print("loss =", loss.item(), "(finite)")
loss.backward()
print("primary.weight.grad has NaN:", torch.isnan(net.primary.weight.grad).any().item())
print("W.grad has NaN:", torch.isnan(net.W.grad).any().item())
