"""Output 0 of BackwardHookFunctionBackward is a view and is being modified inplace."""

import torch

model = torch.nn.Linear(3, 2)
model.register_full_backward_hook(lambda module, grad_input, grad_output: None)  # <- CAUSE
x = torch.randn(4, 3, requires_grad=True)
y = model(x)
y.relu_()  # <- ERROR
y.sum().backward()
