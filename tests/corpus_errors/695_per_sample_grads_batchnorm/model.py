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
import torch.nn as nn


def make_model(in_dim=10, hidden=32, classes=2):
    return nn.Sequential(
        nn.Linear(in_dim, hidden),
        nn.BatchNorm1d(hidden),  # <- CAUSE
        nn.ReLU(),
        nn.Linear(hidden, classes),
    )
