"""Case 704 - a second optimizer is given a single Parameter instead of a list

Source: pytorch/pytorch test/optim/test_optim.py, TestOptimRenewed.test_errors (ErrorOptimizerInput 'invalid param type': params argument given to the optimizer should be an iterable of Tensors or dicts)
Category: optimizer construction

Reported symptom:
    TypeError: params argument given to the optimizer should be an iterable of Tensors or dicts, but got torch.FloatTensor

Root cause:
    The learnable noise scale of a heteroscedastic regression gets its own
    optimizer: `torch.optim.SGD(model.log_sigma, lr=...)`. A single tensor is
    iterable over its elements, so torch explicitly rejects it: the optimizer
    expects an iterable of tensors (e.g. `[model.log_sigma]`).

Ground truth a good tool should report:
    The optimizer construction with a bare Parameter (CAUSE/ERROR); wrap it
    in a list.
"""
import torch
import torch.nn as nn

torch.manual_seed(0)


class HeteroscedasticRegressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.mean = nn.Sequential(nn.Linear(3, 16), nn.Tanh(), nn.Linear(16, 1))
        self.log_sigma = nn.Parameter(torch.zeros(1))

    def forward(self, x):
        return self.mean(x), self.log_sigma.exp()


model = HeteroscedasticRegressor()
opt_mean = torch.optim.Adam(model.mean.parameters(), lr=1e-2)
opt_sigma = torch.optim.SGD(model.log_sigma, lr=1e-3)  # <- CAUSE,ERROR

x = torch.randn(64, 3)
y = x.sum(1, keepdim=True) + 0.3 * torch.randn(64, 1)
for step in range(3):
    opt_mean.zero_grad()
    opt_sigma.zero_grad()
    mu, sigma = model(x)
    nll = (0.5 * ((y - mu) / sigma) ** 2 + torch.log(sigma)).mean()
    nll.backward()
    opt_mean.step()
    opt_sigma.step()
    print("step", step, nll.item())
