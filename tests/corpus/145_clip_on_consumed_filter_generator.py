"""Case 145 - clip_grad_norm_ receives a filter() iterator the optimizer already consumed

Source: https://github.com/PixArt-alpha/PixArt-alpha/pull/160 "fix iterator for
        params_to_clip" ("since the lora_layers was initialized with filter() it would
        be only iteratable only once. so the call accelerator.clip_grad_norm_() ...
        would always get an empty list. so no gradient clipping would be done");
        the general trap: https://github.com/pytorch/pytorch/issues/148259
Category: training-step protocol (work that is thrown away)

Reported symptom:
    No error.  Gradient clipping never happens; the reported grad norm is 0.0.
    (Recent torch warns "`parameters` is an empty generator" only for a generator
    object; a `filter` object is not one, so this script runs without any warning.)

Root cause:
    `trainable = filter(lambda p: p.requires_grad, model.parameters())` is a one-shot
    iterator.  Passing it to the optimizer's constructor exhausts it, so every later
    `clip_grad_norm_(trainable, ...)` iterates over nothing and clips nothing.

Ground truth a good tool should report:
    clip_grad_norm_ at line 67 was given an exhausted iterator (created at line 55,
    consumed by the optimizer constructor at line 56): it saw 0 parameters while the
    optimizer holds 4 with gradients, so the step at line 68 uses unclipped gradients.
    Fix: `trainable = list(filter(...))`, or pass the parameters again at line 67.
    EXPECT: kind=clip_no_parameters; cause_line=55,67; step_line=68

Observed (torch 2.13.0, CPU, this script):
    exit code: 0 (nothing on stderr)
    stdout:
        step 0: clip_grad_norm_ returned 0.000 | real adapter grad norm 36.42 (max 1.0)
        step 1: clip_grad_norm_ returned 0.000 | real adapter grad norm 4204 (max 1.0)
        step 2: clip_grad_norm_ returned 0.000 | real adapter grad norm 2.17e+07 (max 1.0)
"""
import torch
import torch.nn as nn

torch.manual_seed(0)


class LoRALinear(nn.Module):
    """Frozen base projection plus a trainable low-rank update."""

    def __init__(self, d_in, d_out, rank=2):
        super().__init__()
        self.base = nn.Linear(d_in, d_out)
        self.base.requires_grad_(False)
        self.down = nn.Parameter(torch.randn(rank, d_in) * 0.5)
        self.up = nn.Parameter(torch.randn(d_out, rank) * 0.5)

    def forward(self, x):
        return self.base(x) + x @ self.down.t() @ self.up.t()


model = nn.Sequential(LoRALinear(10, 20), nn.Tanh(), LoRALinear(20, 4))
trainable = filter(lambda p: p.requires_grad, model.parameters())  # <- CAUSE: one-shot iterator
optimizer = torch.optim.SGD(trainable, lr=0.5)  # <- READ: consumes `trainable`
max_grad_norm = 1.0

for step in range(3):
    x = torch.randn(16, 10) * 4
    y = torch.randn(16, 4) * 10
    optimizer.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    real = torch.nn.utils.get_total_norm(grads).item()
    reported = torch.nn.utils.clip_grad_norm_(trainable, max_grad_norm)  # <- CAUSE: iterates over nothing
    optimizer.step()
    print(f"step {step}: clip_grad_norm_ returned {reported.item():.3f} | "
          f"real adapter grad norm {real:.4g} (max {max_grad_norm})")
