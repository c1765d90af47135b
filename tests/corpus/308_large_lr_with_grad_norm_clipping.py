"""Correct 308 - learning rate far too large for the raw gradients, kept stable by clip_grad_norm_

Category: correct (numerics: gradient clipping)
What it is:
    An MLP regression on columns of very different scales with SGD(lr=0.2, momentum=0.9)
    and a step LR schedule.  The raw gradient norm starts above 100; clip_grad_norm_(1.0)
    rescales it every step, and the loss decreases.  (Without the clipping the same script
    diverges to an inf loss within 30 steps.)
Why a naive tool might flag it:
    Gradient norms of 100+ and a large learning rate look like an explosion about to
    happen; the clipping makes the update bounded and every value stays finite.
Ground truth a good tool should report:
    EXPECT: no findings (correct training code: large lr with gradient-norm clipping)

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        step 0: loss 12.574, grad norm before clip 141.0
        step 5: loss 11.260, grad norm before clip 142.7
        step 10: loss 8.638, grad norm before clip 102.5
        step 15: loss 8.661, grad norm before clip 91.6
        step 20: loss 4.500, grad norm before clip 43.6
        step 25: loss 2.789, grad norm before clip 22.1
        step 30: loss 2.607, grad norm before clip 20.3
        step 35: loss 2.082, grad norm before clip 17.3
        step 39: loss 1.630, grad norm before clip 8.2
        params finite: True
"""
import torch
import torch.nn as nn

torch.manual_seed(0)

x = torch.randn(128, 4) * torch.tensor([1.0, 3.0, 10.0, 30.0])  # columns on different scales
w_true = torch.tensor([[2.0], [-0.5], [0.1], [0.03]])
y = x @ w_true + 0.1 * torch.randn(128, 1)

model = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.2, momentum=0.9)  # far above what these gradients tolerate unclipped
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=10, gamma=0.5)

for step in range(40):
    loss = nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    raw_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    opt.step()
    sched.step()
    if step % 5 == 0 or step == 39:
        print(f"step {step}: loss {loss.item():.3f}, grad norm before clip {raw_norm.item():.1f}")
print("params finite:", all(torch.isfinite(p).all().item() for p in model.parameters()))
