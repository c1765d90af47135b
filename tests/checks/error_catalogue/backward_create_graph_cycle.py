"""A gradient-norm penalty built by backward(create_graph=True): each parameter's .grad keeps the graph that made it (torch's test_autograd: test_backward_create_graph_warns)."""

import torch

w = torch.randn(3, requires_grad=True)
loss = (w**3).sum()
loss.backward(create_graph=True)  # <- CAUSE
penalty = w.grad.pow(2).sum()
print(float(penalty))
