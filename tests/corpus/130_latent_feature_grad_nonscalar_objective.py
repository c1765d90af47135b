"""Case 130 - latent-space feature visualisation: autograd.grad of a per-sample activation vector

Source: https://github.com/Animadversio/GAN-Geometry/issues/4
        "When I use GANForwardHVPOperator, I find some errors reported"
        (`torch.autograd.grad(activs, perturb_vecs, ...)` with `activs` one value
        per latent code -> "RuntimeError: grad can be implicitly created only for
        scalar outputs"; the reporter fixed it with `activs.mean()`)
Category: non-scalar output without grad_outputs

Reported symptom:
    RuntimeError: grad can be implicitly created only for scalar outputs

Root cause:
    The objective (mean activation of one feature channel of a frozen scorer,
    for each generated image) returns one value per latent code, shape (B,).
    torch.autograd.grad(outputs, inputs) with no grad_outputs can only seed a
    scalar output.  The per-sample objectives are independent, so summing (or
    averaging) them, or passing grad_outputs=torch.ones_like(activ), gives
    each latent its own gradient.

Ground truth a good tool should report:
    `activ` (shape (6,), returned by channel_objective at line 54) is passed
    as the output of torch.autograd.grad at line 64 without grad_outputs.
    Fix at line 64 (`activ.sum()` or grad_outputs=torch.ones_like(activ)) or
    reduce in channel_objective at line 54.
    EXPECT: kind=nonscalar_grad_output; tensor=activ; shape=(6,);
            cause_line=64,54; error_line=64

Observed (torch 2.13.0, CPU, this script):
    exit code: 1
    stdout:
        objective shape: (6,)
    exception:
        RuntimeError: grad can be implicitly created only for scalar outputs
"""
import torch
import torch.nn as nn

torch.manual_seed(0)

generator = nn.Sequential(
    nn.Linear(16, 8 * 4 * 4), nn.ReLU(), nn.Unflatten(1, (8, 4, 4)),
    nn.ConvTranspose2d(8, 4, 4, stride=2, padding=1), nn.ReLU(),
    nn.ConvTranspose2d(4, 3, 4, stride=2, padding=1), nn.Tanh(),
)
scorer = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 12, 3, padding=1))
for module in (generator, scorer):
    module.eval()
    module.requires_grad_(False)


def channel_objective(images, channel=5):
    fmap = scorer(images)
    return fmap[:, channel].mean(dim=(1, 2))  # <- CAUSE: one value per latent code, shape (B,)


codes = torch.randn(6, 16, requires_grad=True)
step_size = 0.5
for it in range(3):
    activ = channel_objective(generator(codes))
    if it == 0:
        print("objective shape:", tuple(activ.shape))
    # gradient ascent on every latent code at once
    (grad_codes,) = torch.autograd.grad(activ, codes)  # <- CAUSE,ERROR: non-scalar output, no grad_outputs
    with torch.no_grad():
        codes += step_size * grad_codes / (grad_codes.norm(dim=1, keepdim=True) + 1e-8)
print("activation after ascent:", channel_objective(generator(codes)).tolist())
