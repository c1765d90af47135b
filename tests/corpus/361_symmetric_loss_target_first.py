"""Case 361 - correct: symmetric losses written as loss(target, prediction)

Source: https://github.com/pytorch/pytorch/issues/13328
        "l1loss different results based on arguments position" (a 0.4.1 bug,
        fixed long ago: https://github.com/pytorch/pytorch/pull/44471 and
        https://github.com/pytorch/pytorch/pull/44437 made l1_loss / mse_loss
        differentiate correctly whichever argument requires grad)
Category: correct code a naive tool flags (argument order of a loss)

What the code does:
    A small 1-D denoising conv net is trained with
    `F.l1_loss(clean, pred) + 0.5 * F.mse_loss(clean, pred)`: the constant
    target is the first argument ("input") and the network output the second
    ("target").  Both losses are symmetric in their arguments and autograd
    differentiates through either argument, so the gradients are exactly the
    ones of `loss(pred, clean)`.

Why a naive tool might flag it:
    The argument named `target` requires grad while `input` does not, which
    looks like "the prediction was passed as the target"; old PyTorch even
    refused it.

Ground truth a good tool should report:
    Nothing: every parameter receives the correct gradient (checked at the
    end against the conventional argument order).
    EXPECT: no findings

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        step  0 loss 0.9290
        step 59 loss 0.1149
        gradients identical for both argument orders: True
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

denoiser = nn.Sequential(
    nn.Conv1d(1, 8, 5, padding=2), nn.ReLU(),
    nn.Conv1d(8, 8, 5, padding=2), nn.ReLU(),
    nn.Conv1d(8, 1, 5, padding=2),
)
optimizer = torch.optim.Adam(denoiser.parameters(), lr=3e-3)
t = torch.linspace(0, 6.28, 64)
clean = torch.stack([torch.sin(f * t) for f in torch.linspace(1, 3, 16)]).unsqueeze(1)
noisy = clean + 0.3 * torch.randn_like(clean)

for step in range(60):
    optimizer.zero_grad()
    pred = denoiser(noisy)
    loss = F.l1_loss(clean, pred) + 0.5 * F.mse_loss(clean, pred)
    loss.backward()
    optimizer.step()
    if step in (0, 59):
        print(f"step {step:2d} loss {loss.item():.4f}")

# the argument order does not matter: same value, same gradients
pred = denoiser(noisy)
params = list(denoiser.parameters())
g_swapped = torch.autograd.grad(F.l1_loss(clean, pred) + 0.5 * F.mse_loss(clean, pred), params,
                                retain_graph=True)
g_usual = torch.autograd.grad(F.l1_loss(pred, clean) + 0.5 * F.mse_loss(pred, clean), params)
print("gradients identical for both argument orders:",
      all(torch.allclose(a, b) for a, b in zip(g_swapped, g_usual)))
