"""The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please use linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr."""

import torch

A = torch.randn(4, 3, requires_grad=True)
R = torch.linalg.qr(A, mode="r").R
R.diagonal().abs().log().sum().backward()  # <- ERROR
