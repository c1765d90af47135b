"""Clean 412 - custom input normaliser whose running mean/var buffers are updated in
place inside forward(), called twice per training step

What it does:
    RunningNorm keeps `mean`, `var` and `count` as buffers (register_buffer).  In
    training mode its forward first updates them in place under torch.no_grad()
    (Welford/Chan merge of the batch statistics), then returns
    (x - mean) / sqrt(var + eps).  The model applies it to a clean and to a noisy
    copy of the batch in the same step (consistency regularisation), so the buffers
    are modified in place between the two forwards and before backward.

Why it is correct (not a bug):
    The buffers do not require grad and the in-place updates run under no_grad, so
    nothing is recorded.  No autograd node saves the buffers themselves: SubBackward0
    saves nothing, and DivBackward0 saves the fresh tensor returned by
    `(var + eps).sqrt()`, not `var`; hence the second forward's in-place update cannot
    invalidate the first forward's graph.  In eval mode the stats are frozen.
    EXPECT: no findings

Observed (torch 2.13, CPU):
    exit code: 0
    stdout:
        step 0: loss=4.4893 running var[0]=834.4 count=64
        step 1: loss=6.4095 running var[0]=977.4 count=128
        step 2: loss=4.5675 running var[0]=1000.9 count=192
        step 3: loss=7.0751 running var[0]=1000.4 count=256
        step 4: loss=5.2208 running var[0]=1010.5 count=320
        step 5: loss=3.7769 running var[0]=1029.7 count=384
        step 6: loss=3.7236 running var[0]=1027.0 count=448
        step 7: loss=3.1284 running var[0]=1051.7 count=512
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class RunningNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.register_buffer("mean", torch.zeros(dim))
        self.register_buffer("var", torch.ones(dim))
        self.register_buffer("count", torch.tensor(0.0))

    def forward(self, x):
        if self.training:
            with torch.no_grad():
                b_mean, b_var, n = x.mean(0), x.var(0, unbiased=False), x.shape[0]
                total = self.count + n
                delta = b_mean - self.mean
                self.mean.add_(delta * n / total)
                self.var.mul_(self.count / total).add_(b_var * n / total + delta.pow(2) * self.count * n / total ** 2)
                self.count.add_(n)
        return (x - self.mean) / (self.var + self.eps).sqrt()


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(6, 16)
        self.norm = RunningNorm(16)
        self.mlp = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, x):
        return self.mlp(self.norm(self.embed(x)))


model = Regressor()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
scale, shift = torch.tensor([1., 10., 100., .1, 5., 50.]), torch.tensor([0., 3., -20., 1., 0., 7.])
for step in range(8):
    x = torch.randn(32, 6) * scale + shift
    y = (x - shift) / scale @ torch.ones(6, 1)
    pred = model(x)
    pred_noisy = model(x + 0.05 * scale * torch.randn_like(x))
    loss = F.mse_loss(pred, y) + 0.1 * F.mse_loss(pred_noisy, pred.detach())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"step {step}: loss={loss.item():.4f} running var[0]={model.norm.var[0].item():.1f} "
          f"count={int(model.norm.count)}")
