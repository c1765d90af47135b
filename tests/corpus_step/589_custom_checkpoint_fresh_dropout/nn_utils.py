"""Case 589 - a hand-written checkpoint re-runs dropout with fresh masks in backward

Source: https://github.com/openai/guided-diffusion/issues/167
        (the repository's own checkpoint helper re-runs the forward during backprop
        without restoring the RNG state, so dropout draws a different mask)
Category: 7 - backward has no side effects on state

Root cause:
    CheckpointFunction runs the block under no_grad in forward and runs it again
    in backward to rebuild the graph, but never saves the RNG state in forward
    nor restores it before the rerun. Every dropout inside the block draws a
    new mask in backward: the gradient belongs to another network than the loss,
    and the RNG stream has moved on by a whole extra forward.
"""
import torch


def checkpoint(func, inputs, params, flag):
    if flag:
        args = tuple(inputs) + tuple(params)
        return CheckpointFunction.apply(func, len(inputs), *args)
    return func(*inputs)


class CheckpointFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, run_function, length, *args):
        ctx.run_function = run_function
        ctx.input_tensors = list(args[:length])
        ctx.input_params = list(args[length:])
        with torch.no_grad():
            output_tensors = ctx.run_function(*ctx.input_tensors)
        return output_tensors

    @staticmethod
    def backward(ctx, *output_grads):
        ctx.input_tensors = [x.detach().requires_grad_(True) for x in ctx.input_tensors]
        with torch.enable_grad():
            shallow_copies = [x.view_as(x) for x in ctx.input_tensors]
            output_tensors = ctx.run_function(*shallow_copies)  # <- CAUSE
        input_grads = torch.autograd.grad(
            output_tensors,
            ctx.input_tensors + ctx.input_params,
            output_grads,
            allow_unused=True,
        )
        del ctx.input_tensors, ctx.input_params, output_tensors
        return (None, None) + input_grads
