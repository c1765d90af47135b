"""Case 222 - WGAN critic weight clipping written as `p.data.clamp(-c, c)`: the
out-of-place result is thrown away and the weights are never clipped

Source: composite of common forum reports (WGAN ports that call `clamp` instead of
        `clamp_` on the critic parameters; the reference implementation,
        martinarjovsky/WassersteinGAN main.py, uses p.data.clamp_(...))
Category: silent no-op (out-of-place op used as a statement)

Reported symptom:
    No error.  The critic's Lipschitz constraint is not enforced: critic outputs and
    the Wasserstein estimate grow without bound and the generator does not improve.

Root cause:
    Tensor.clamp returns a NEW tensor; called as a statement its result is discarded
    and the parameter is unchanged.  The in-place variant clamp_ (on p.data or under
    torch.no_grad()) is required.

Ground truth a good tool should report:
    The value returned by `p.data.clamp(...)` at line 58 is never used; the critic
    parameters keep values far outside [-0.01, 0.01] (see the final print).  Fix:
    `p.data.clamp_(-CLIP, CLIP)` or `with torch.no_grad(): p.clamp_(-CLIP, CLIP)`.
    EXPECT: kind=discarded_result; op=clamp; cause_line=58; params=critic.*

Observed (torch 2.13, CPU):
    exit code: 0
    stdout:
        iter 4: critic loss=-0.7733 generator loss=-0.3058
        iter 9: critic loss=-1.0409 generator loss=-0.3467
        iter 14: critic loss=-1.1622 generator loss=-0.3637
        iter 19: critic loss=-1.4566 generator loss=-0.3355
        largest |critic weight| = 0.789 (clip value 0.01)
"""
import torch
import torch.nn as nn

torch.manual_seed(0)
Z_DIM, X_DIM, CLIP, N_CRITIC = 4, 2, 0.01, 5

generator = nn.Sequential(nn.Linear(Z_DIM, 32), nn.ReLU(), nn.Linear(32, X_DIM))
critic = nn.Sequential(nn.Linear(X_DIM, 32), nn.ReLU(), nn.Linear(32, 1))
opt_g = torch.optim.RMSprop(generator.parameters(), lr=5e-4)
opt_c = torch.optim.RMSprop(critic.parameters(), lr=5e-4)


def real_batch(n=64):
    angle = torch.rand(n) * 6.2832
    return torch.stack([angle.cos(), angle.sin()], dim=1) * 2.0 + 0.05 * torch.randn(n, 2)


for it in range(20):
    for _ in range(N_CRITIC):
        fake = generator(torch.randn(64, Z_DIM)).detach()
        loss_c = critic(fake).mean() - critic(real_batch()).mean()
        opt_c.zero_grad()
        loss_c.backward()
        opt_c.step()
        for p in critic.parameters():
            p.data.clamp(-CLIP, CLIP)  # <- CAUSE: result discarded, should be clamp_

    loss_g = -critic(generator(torch.randn(64, Z_DIM))).mean()
    opt_g.zero_grad()
    loss_g.backward()
    opt_g.step()
    if it % 5 == 4:
        print(f"iter {it}: critic loss={loss_c.item():.4f} generator loss={loss_g.item():.4f}")

max_abs = max(p.abs().max().item() for p in critic.parameters())
print(f"largest |critic weight| = {max_abs:.3f} (clip value {CLIP})")
