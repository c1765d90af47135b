"""For complex Tensors, both grad_output and output are required to have the same dtype. Mismatch in dtype: grad_output[0] has a dtype of torch.float32 and output[0] has a dtype of torch.complex64."""

import torch

z = torch.randn(3, dtype=torch.cfloat, requires_grad=True)
out = z * 2
out.backward(torch.ones(3))  # <- CAUSE,ERROR
