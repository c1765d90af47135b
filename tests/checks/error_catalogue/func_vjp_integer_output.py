"""vjp(f, ...): All outputs of f must be floating-point or complex Tensors, got Tensor with dtype torch.int64"""

import torch


def predict(x):
    return x.argmax(dim=-1)


out, vjp_fn = torch.func.vjp(predict, torch.randn(4, 3))  # <- CAUSE
grads = vjp_fn(torch.ones(4))
