"""Trying to backward outside of the 'allow_mutation_on_saved_tensors' context in which the graph was originally recorded."""

import torch

x = torch.randn(3, requires_grad=True)
with torch.autograd.graph.allow_mutation_on_saved_tensors():
    y = x.clone().sin()
y.sum().backward()  # <- CAUSE
