"""all inputs have to be Tensors or GradientEdges, but got Linear"""

import torch

model = torch.nn.Linear(3, 1)
loss = model(torch.randn(4, 3)).sum()
grads = torch.autograd.grad(loss, [model])  # <- ERROR
