"""params argument given to the optimizer should be an iterable of Tensors or dicts, but got torch.FloatTensor"""

import torch

w = torch.randn(3, requires_grad=True)
optimizer = torch.optim.SGD(w, lr=0.1)  # <- CAUSE
