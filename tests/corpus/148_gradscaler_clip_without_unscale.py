"""Case 148 - AMP: clip_grad_norm_ on the scaled gradients (no scaler.unscale_ first)

Source: https://github.com/milesial/Pytorch-UNet/issues/468 "Gradients are clipped
        before the unscaling" (train.py: scaler.scale(loss).backward();
        clip_grad_norm_(...); scaler.step(optimizer)), fixed by
        https://github.com/milesial/Pytorch-UNet/pull/470 "Unscale gradients before
        clipping"; same bug: https://github.com/pytorch/examples/issues/1196
Category: training-step protocol (AMP gradient scaling)

Reported symptom:
    No error.  With AMP on, the model trains far slower than without it; the clip
    threshold acts on gradients that are ~65536x too large.

Root cause:
    After `scaler.scale(loss).backward()` every .grad holds grad * scale.
    clip_grad_norm_(max_norm=1.0) measures that scaled norm and shrinks the
    gradients to norm 1.0 *in scaled units*; scaler.step() then divides by the scale,
    so the update uses a gradient of norm 1/scale instead of min(norm, 1.0).
    `scaler.unscale_(optimizer)` must run before the clip.

Ground truth a good tool should report:
    clip_grad_norm_ at line 71 runs on gradients still multiplied by the GradScaler
    scale (65536) from `scaler.scale(loss).backward()` at line 70; no
    `scaler.unscale_(optimizer)` in between.  The clip measures 65536x the true norm
    and the step at line 72 applies a gradient of norm 1/65536.
    EXPECT: kind=clip_scaled_grads; cause_line=71; backward_line=70; step_line=72

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        iter 0: clip saw norm 8813 | true grad norm 0.1345 | applied update / lr 1.526e-05 (intended 0.1345)
        iter 1: clip saw norm 9919 | true grad norm 0.1513 | applied update / lr 1.531e-05 (intended 0.1513)
        iter 2: clip saw norm 8470 | true grad norm 0.1292 | applied update / lr 1.532e-05 (intended 0.1292)
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TinyUNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.down = nn.Conv2d(1, 8, 3, padding=1)
        self.bottom = nn.Conv2d(8, 8, 3, padding=1)
        self.up = nn.ConvTranspose2d(8, 8, 2, stride=2)
        self.out = nn.Conv2d(16, 1, 1)

    def forward(self, x):
        d = F.relu(self.down(x))
        b = F.relu(self.bottom(F.max_pool2d(d, 2)))
        return self.out(torch.cat([self.up(b), d], dim=1))


model = TinyUNet()
lr = 0.1
optimizer = torch.optim.SGD(model.parameters(), lr=lr)
scaler = torch.amp.GradScaler("cpu")
gradient_clipping = 1.0

for it in range(3):
    images = torch.randn(2, 1, 16, 16)
    masks = (torch.rand(2, 1, 16, 16) > 0.5).float()
    before = [p.detach().clone() for p in model.parameters()]

    optimizer.zero_grad(set_to_none=True)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = F.binary_cross_entropy_with_logits(model(images), masks)
    scaler.scale(loss).backward()
    seen = torch.nn.utils.clip_grad_norm_(model.parameters(), gradient_clipping)  # <- CAUSE: grads are still scaled; unscale_ first
    scaler.step(optimizer)
    scaler.update()

    moved = sum(((p.detach() - b) ** 2).sum() for p, b in zip(model.parameters(), before)) ** 0.5
    true_norm = seen.item() / scaler.get_scale()
    print(f"iter {it}: clip saw norm {seen.item():.4g} | true grad norm {true_norm:.4g} | "
          f"applied update / lr {moved.item() / lr:.4g} (intended {min(true_norm, gradient_clipping):.4g})")
