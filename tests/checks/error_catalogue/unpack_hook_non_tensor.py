"""Output of saved tensor unpack_hook expected to be a Tensor but got result of type NoneType"""

import torch


def pack(t):
    return t


def unpack(t):
    t.mul_(1)


w = torch.randn(3, requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
    loss = (w * w).sum()
loss.backward()  # <- ERROR
