"""Case 649 - custom Function reads ctx.saved_tensors twice inside a non-reentrant checkpoint (ops module)

Source: pytorch/pytorch test/test_autograd.py, test_checkpointing_without_reentrant_custom_function_works (assertRaisesRegex "Unpack is being triggered for a tensor that was already unpacked once")
Category: checkpoint

Reported symptom:
    torch.utils.checkpoint.CheckpointError: torch.utils.checkpoint: Unpack is being triggered for a tensor that was already unpacked once. If you are calling ctx.saved_tensors in backward, make sure to do so only once. Otherwise please open an issue with details on your use case.

Root cause:
    FusedGeluLinear.backward unpacks ctx.saved_tensors once for a sanity check and a
    second time to compute the gradients. Under non-reentrant activation
    checkpointing, recomputed saved tensors are handed out once and then cleared, so
    the second unpack raises.

Ground truth a good tool should report:
    The second `ctx.saved_tensors` access in FusedGeluLinear.backward (unpack once
    and reuse the tensors); the error is raised on that line, inside the backward
    pass started by loss.backward() in train.py.
"""
import torch


class FusedGeluLinear(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight):
        pre = x @ weight.t()
        ctx.save_for_backward(x, weight, pre)
        return torch.nn.functional.gelu(pre)

    @staticmethod
    def backward(ctx, grad_out):
        x, weight, _ = ctx.saved_tensors
        assert x.shape[-1] == weight.shape[-1]
        x, weight, pre = ctx.saved_tensors  # <- CAUSE,ERROR: second unpack
        with torch.enable_grad():
            p = pre.detach().requires_grad_()
            (g_pre,) = torch.autograd.grad(torch.nn.functional.gelu(p), p, grad_out)
        return g_pre @ weight, g_pre.t() @ x
