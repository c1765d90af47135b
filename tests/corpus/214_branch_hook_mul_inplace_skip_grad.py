"""Case 214 - residual-branch gradient scaling with a tensor hook that multiplies the
gradient in place: the skip connection's gradient is scaled too

Source: https://github.com/meta-pytorch/opacus/issues/9 "backward hook function"
        (reviewer: the hook modifies its arguments in place, "this should be avoided as
        it is related to a known bug in PyTorch", https://github.com/pytorch/pytorch/issues/598);
        the aliasing of the two add() gradients is shown in
        https://github.com/pytorch/pytorch/issues/60456 (hooks on out = b1(x) + b2(x)
        see the same gradient).  Docs: "The hook should not modify its argument".
Category: hook-misuse (silent: hook mutates a shared gradient buffer)

Symptom (as reproduced here):
    No error.  Early layers train far slower than expected; their gradients are
    scaled by branch_grad_scale once per residual block even though only the
    residual branches were meant to be down-weighted.

Root cause:
    For out = x + r, AddBackward0 passes the *same* gradient tensor to both inputs.
    The hook registered on r receives that tensor and calls g.mul_() on it, so the
    gradient already queued for the skip path x is rescaled as well.  With three
    blocks the skip-path part of the stem gradient is scaled by 0.1**3 instead of
    being left alone.

Ground truth a good tool should report:
    The hook on `r` (registered in ResidualBlock.forward) modifies its grad argument
    in place (`g.mul_`); the same tensor is the gradient of `x` through the skip
    connection, so stem.weight.grad differs from the gradient of the written model.
    Fix: `return g * self.branch_grad_scale`.
    EXPECT: kind=hook_inplace_grad; cause_line=59; hook_registered_line=55

Observed (torch 2.13, CPU):
    exit code: 0
    stdout:
        stem.weight.grad matches the intended gradient: False  (norm 9.63e-04 vs 9.04e-01)
        step 0: loss=0.9704
        step 1: loss=0.8415
        step 2: loss=0.7308
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ResidualBlock(nn.Module):
    def __init__(self, dim, branch_grad_scale=0.1):
        super().__init__()
        self.branch = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, dim), nn.GELU(), nn.Linear(dim, dim))
        self.branch_grad_scale = branch_grad_scale

    def forward(self, x):
        r = self.branch(x)
        if r.requires_grad:
            r.register_hook(self._scale_branch_grad)
        return x + r

    def _scale_branch_grad(self, g):
        g.mul_(self.branch_grad_scale)  # <- CAUSE: rescales the tensor shared with the skip path
        return g


class DeepResMLP(nn.Module):
    def __init__(self, block=ResidualBlock, dim=32, depth=3):
        super().__init__()
        self.stem = nn.Linear(16, dim)
        self.blocks = nn.Sequential(*[block(dim) for _ in range(depth)])
        self.head = nn.Linear(dim, 1)

    def forward(self, x):
        return self.head(self.blocks(self.stem(x)))


class ReferenceBlock(ResidualBlock):
    def _scale_branch_grad(self, g):
        return g * self.branch_grad_scale


model = DeepResMLP()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
x, y = torch.randn(32, 16), torch.randn(32, 1)

for step in range(3):
    loss = F.mse_loss(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    if step == 0:
        ref = DeepResMLP(block=ReferenceBlock)
        ref.load_state_dict(model.state_dict())
        F.mse_loss(ref(x), y).backward()
        ok = torch.allclose(model.stem.weight.grad, ref.stem.weight.grad)
        print(f"stem.weight.grad matches the intended gradient: {ok}"
              f"  (norm {model.stem.weight.grad.norm():.2e} vs {ref.stem.weight.grad.norm():.2e})")
    optimizer.step()
    print(f"step {step}: loss={loss.item():.4f}")
