"""Case 531 - hand-written checkpoint function recomputes dropout without restoring the RNG

Source: https://github.com/openai/guided-diffusion/issues/167
        "non-zero dropout with gradient checkpoint enabled causes loss to diverge"
Category: 7 - backward has no side effects on state

Reported symptom:
    With dropout > 0 and use_checkpoint=True the training loss stops improving
    (and diverges on long runs); with checkpointing off, the same configuration
    trains normally.

Root cause:
    The repository's own CheckpointFunction.backward re-runs the block's forward
    to rebuild activations, but never saved or restored the RNG state in forward.
    Every dropout layer inside the block samples a new mask during backward, so
    the gradients belong to a different random network than the loss, and the
    global RNG advances during backward.

Ground truth a good tool should report:
    Backward recomputes dropout with different random masks than forward
    (gradient/loss mismatch, RNG consumed during backward); the recomputation
    without RNG restore is in nn_utils.py (the `output_tensors = ctx.run_function(...)`
    line in CheckpointFunction.backward).
"""
import torch


def checkpoint(func, inputs, params, flag):
    """Evaluate func(*inputs) without caching intermediate activations."""
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
            output_tensors, ctx.input_tensors + ctx.input_params, output_grads, allow_unused=True
        )
        del ctx.input_tensors, ctx.input_params, output_tensors
        return (None, None) + input_grads
