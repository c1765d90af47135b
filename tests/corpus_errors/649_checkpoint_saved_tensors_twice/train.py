"""Case 649 - activation-checkpointed MLP with a custom fused op (entry point)

Source: pytorch/pytorch test/test_autograd.py, test_checkpointing_without_reentrant_custom_function_works (assertRaisesRegex "Unpack is being triggered for a tensor that was already unpacked once")
Category: checkpoint

Reported symptom:
    torch.utils.checkpoint.CheckpointError: torch.utils.checkpoint: Unpack is being triggered for a tensor that was already unpacked once. If you are calling ctx.saved_tensors in backward, make sure to do so only once. Otherwise please open an issue with details on your use case.

Root cause:
    ops.py, FusedGeluLinear.backward unpacks ctx.saved_tensors twice; non-reentrant
    checkpoint only allows one unpack of each recomputed tensor.

Ground truth a good tool should report:
    ops.py, the second `x, weight, pre = ctx.saved_tensors` in
    FusedGeluLinear.backward, which is also where the error is raised (inside the
    backward run by loss.backward() below).
"""
import torch

from model import CheckpointedMLP

torch.manual_seed(0)

model = CheckpointedMLP()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
x, y = torch.randn(8, 16), torch.randn(8, 1)

for step in range(3):
    loss = torch.nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.4f}")
