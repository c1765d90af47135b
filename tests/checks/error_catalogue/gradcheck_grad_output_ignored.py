"""backward not multiplied by grad_output"""

import torch


class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.pow(2).sum()

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 2 * x  # <- CAUSE


x = torch.randn(4, dtype=torch.float64, requires_grad=True)
torch.autograd.gradcheck(Square.apply, (x,))  # <- ERROR
