"""The inputs given to jacobian must be either a Tensor or a tuple of Tensors but the given inputs has type <class 'list'>."""

import torch

jac = torch.autograd.functional.jacobian(torch.mul, [torch.randn(3), torch.randn(3)])  # <- CAUSE
