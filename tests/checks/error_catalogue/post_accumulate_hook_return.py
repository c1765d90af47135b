"""Tensor post accumulate grad hooks should return None."""

import torch

w = torch.randn(3, requires_grad=True)
w.register_post_accumulate_grad_hook(lambda p: p.grad * 0.5)
(w * 2).sum().backward()  # <- ERROR
