"""Correct 348 - a finite-difference gradient check reads .grad, then zero_grad() before training

Source: the "check your gradients before training" practice (cf. torch.autograd.gradcheck,
        https://pytorch.org/docs/stable/generated/torch.autograd.gradcheck.html), done by
        hand on a model with a custom loss, as users do when validating a new loss
Category: correct script (a backward whose gradients are read, then cleared)

What it does:
    A regression MLP in float64 with a custom heteroscedastic (Gaussian NLL) loss.
    Before training, one backward() fills .grad; a few weight entries are compared
    with central finite differences computed by perturbing the weights in place
    under torch.no_grad() (and restoring them).  The check reads the gradients, then
    `optimizer.zero_grad()` clears them so the first real step does not include
    them (the training loop zeroes after each step, so this is the only clear before
    the first step).  Then an ordinary training loop runs.

Ground truth a good tool should report:
    EXPECT: no findings

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        grad check 0.weight[0, 0]: autograd -0.35237 finite-diff -0.35237
        grad check 0.weight[3, 1]: autograd 0.2363 finite-diff 0.2363
        grad check 2.bias[1]: autograd -2.3333 finite-diff -2.3333
        max relative error 4.8e-10
        epoch 0: nll 1.7726
        epoch 4: nll 0.6489
"""
import torch
import torch.nn as nn

torch.manual_seed(0)
torch.set_default_dtype(torch.float64)

model = nn.Sequential(nn.Linear(3, 16), nn.Tanh(), nn.Linear(16, 2))  # outputs mean, log-variance
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
x = torch.randn(64, 3)
y = x[:, :1] * 2.0 + 0.3 * torch.randn(64, 1)


def gaussian_nll(out, target):
    mean, log_var = out[:, :1], out[:, 1:].clamp(-6, 6)
    return 0.5 * (log_var + (target - mean) ** 2 / log_var.exp()).mean()


# --- gradient check on the custom loss -------------------------------------------
loss = gaussian_nll(model(x), y)
loss.backward()
params = dict(model.named_parameters())
worst, eps = 0.0, 1e-6
for name, index in [("0.weight", (0, 0)), ("0.weight", (3, 1)), ("2.bias", (1,))]:
    p = params[name]
    analytic = p.grad[index].item()
    with torch.no_grad():
        p[index] += eps
        up = gaussian_nll(model(x), y).item()
        p[index] -= 2 * eps
        down = gaussian_nll(model(x), y).item()
        p[index] += eps
    numeric = (up - down) / (2 * eps)
    worst = max(worst, abs(analytic - numeric) / max(abs(numeric), 1e-12))
    print(f"grad check {name}[{', '.join(map(str, index))}]: autograd {analytic:.5g} finite-diff {numeric:.5g}")
print(f"max relative error {worst:.2g}")
optimizer.zero_grad()

# --- training -----------------------------------------------------------------
for epoch in range(5):
    for start in range(0, 64, 16):
        nll = gaussian_nll(model(x[start:start + 16]), y[start:start + 16])
        nll.backward()
        optimizer.step()
        optimizer.zero_grad()
    if epoch in (0, 4):
        with torch.no_grad():
            print(f"epoch {epoch}: nll {gaussian_nll(model(x), y).item():.4f}")
