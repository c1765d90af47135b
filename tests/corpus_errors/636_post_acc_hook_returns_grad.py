"""Case 636 - post-accumulate-grad hook returns the clipped gradient

Source: pytorch/pytorch test/test_autograd.py, test_post_accumulate_grad_hook_returns_not_None (assertRaisesRegex "hooks should return None.")
Category: hooks

Reported symptom:
    RuntimeError: Tensor post accumulate grad hooks should return None.

Root cause:
    The per-parameter hook clips the gradient and returns it, as one would in a
    Tensor.register_hook gradient hook. Post-accumulate-grad hooks receive the
    parameter itself and must modify param.grad in place and return None; the
    engine raises when one returns a value.

Ground truth a good tool should report:
    The `return` line of clip_and_step (the hook registered with
    register_post_accumulate_grad_hook): drop the return value. Raised during
    loss.backward().
"""
import torch
from torch import nn

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 2))
optims = {p: torch.optim.SGD([p], lr=0.05) for p in model.parameters()}


def clip_and_step(param):
    clipped = param.grad.clamp(-1.0, 1.0)
    param.grad.copy_(clipped)
    optims[param].step()
    return param.grad  # <- CAUSE: must return None


for p in model.parameters():
    p.register_post_accumulate_grad_hook(clip_and_step)  # <- REGISTERED

x, y = torch.randn(10, 6), torch.randint(0, 2, (10,))
for step in range(3):
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()  # <- ERROR
    for p in model.parameters():
        p.grad = None
    print(f"step {step} loss {loss.item():.3f}")
