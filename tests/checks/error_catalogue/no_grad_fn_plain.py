"""element 0 of tensors does not require grad: nothing on the way required grad."""

import torch

w = torch.randn(3)
loss = (w * 2).sum()
loss.backward()  # <- ERROR
