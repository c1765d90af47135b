"""Case 831 - per-sample gradients with vmap(grad(...)) on a scalar per-example loss

Source: pytorch/pytorch test/functorch/test_eager_transforms.py, TestGradTransform (grad of a scalar-valued function, pytree inputs)
Category: correct

Reported symptom:
    none - the script computes clipped per-sample gradients and exits normally.

Root cause:
    none - the transformed function returns a 0-dim tensor per example, uses
    LayerNorm (no running buffers are mutated), keeps everything as tensors
    (no .item() inside the transform) and passes the parameters explicitly
    through functional_call.

Ground truth a good tool should report:
    Nothing.
EXPECT: no findings
"""
import torch
import torch.nn as nn
from torch.func import functional_call, grad, vmap

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(10, 32), nn.LayerNorm(32), nn.ReLU(), nn.Linear(32, 2))
params = {k: v.detach() for k, v in model.named_parameters()}


def example_loss(p, x, y):
    logits = functional_call(model, p, (x.unsqueeze(0),))
    return nn.functional.cross_entropy(logits, y.unsqueeze(0))


per_sample_grad = vmap(grad(example_loss), in_dims=(None, 0, 0))

x = torch.randn(16, 10)
y = torch.randint(0, 2, (16,))
for step in range(3):
    grads = per_sample_grad(params, x, y)
    flat = torch.cat([g.flatten(1) for g in grads.values()], dim=1)
    scale = (1.0 / (flat.norm(dim=1) + 1e-6)).clamp(max=1.0)
    avg = {k: (g * scale.view(-1, *[1] * (g.dim() - 1))).mean(0) for k, g in grads.items()}
    params = {k: params[k] - 0.1 * avg[k] for k in params}
    with torch.no_grad():
        loss = nn.functional.cross_entropy(functional_call(model, params, (x,)), y)
    print("step", step, "loss", round(loss.item(), 4))
