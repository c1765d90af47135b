"""A saved tensor pack hook is modifying its input in place."""

import torch


def pack(tensor):
    return tensor.mul_(0.5)  # <- CAUSE


def unpack(tensor):
    return tensor * 2


x = torch.randn(3, requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
    y = x.pow(2)  # <- ERROR
y.sum().backward()
