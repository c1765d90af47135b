"""Case 695 - per-sample gradients with vmap(grad) through a model that has BatchNorm

Source: pytorch/pytorch test/functorch/test_eager_transforms.py, TestGradTransform.test_inplace_on_captures (assertRaisesRegex 'mutate a captured Tensor')
Category: torch.func transforms

Reported symptom:
    RuntimeError: During a grad (vjp, jvp, grad, etc) transform, the function provided attempted to call in-place operation (aten::add_.Tensor) that would mutate a captured Tensor. This is not supported; please rewrite the function being transformed to explicitly accept the mutated Tensor(s) as inputs.

Root cause:
    The DP-SGD helper computes per-sample gradients with
    vmap(grad(loss_fn)) over functional_call(model, params, ...). The model
    (model.py) contains nn.BatchNorm1d in training mode, whose forward updates
    the running_mean/running_var buffers in place. Those buffers are not inputs
    of the transformed function (only the parameters are), so the in-place
    update mutates a captured tensor, which torch.func forbids.

Ground truth a good tool should report:
    The nn.BatchNorm1d layer in model.py (CAUSE) updates running statistics
    in place inside the transformed function; use GroupNorm/LayerNorm, eval
    mode, or pass the buffers explicitly (functional_call with buffers and
    track_running_stats=False). Raised at the functional_call inside loss_fn
    in utils/privacy.py (ERROR).
"""
import torch
import torch.nn as nn
from torch.func import functional_call, grad, vmap


def per_sample_clipped_grads(model, params, x, y, max_norm=1.0):
    def loss_fn(p, xi, yi):
        logits = functional_call(model, p, (xi.unsqueeze(0),))  # <- ERROR
        return nn.functional.cross_entropy(logits, yi.unsqueeze(0))

    grads = vmap(grad(loss_fn), in_dims=(None, 0, 0))(params, x, y)
    flat = torch.cat([g.flatten(1) for g in grads.values()], dim=1)
    scale = (max_norm / (flat.norm(dim=1) + 1e-6)).clamp(max=1.0)
    return {k: (g * scale.view(-1, *[1] * (g.dim() - 1))).mean(0) for k, g in grads.items()}
