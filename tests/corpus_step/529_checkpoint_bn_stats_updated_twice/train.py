"""Case 529 - activation checkpointing re-runs BatchNorm and updates its running stats twice

Source: https://github.com/pytorch/pytorch/issues/96136
        "the batch norm will be updated twice because the forward pass has to be ran twice"
Category: 7 - backward has no side effects on state

Reported symptom:
    Checkpointed and non-checkpointed runs with identical losses and gradients
    end with different BatchNorm running statistics; num_batches_tracked is twice
    the number of training steps and evaluation-mode results differ.

Root cause:
    Block.forward wraps a Linear+BatchNorm1d sub-network in
    torch.utils.checkpoint.checkpoint. During backward the checkpoint re-runs
    that forward in training mode, so BatchNorm updates running_mean,
    running_var and num_batches_tracked a second time - a state change made by
    backward itself.

Ground truth a good tool should report:
    backward() changes module buffers (bn.running_mean/var, num_batches_tracked
    incremented twice per step); the recomputation comes from the checkpoint
    call in model.py (the `checkpoint(self.body, x, use_reentrant=False)` line).
"""
import torch
import torch.nn.functional as F

from model import DeepNet

torch.manual_seed(0)

x = torch.randn(512, 10) * 2 + 1
y = (x ** 2).sum(1) * 0.1

model = DeepNet()
optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)

steps = 20
for step in range(steps):
    idx = torch.randint(0, 512, (64,))
    loss = F.mse_loss(model(x[idx].requires_grad_()), y[idx])
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

bn = model.blocks[0].body[1]
print(f"training steps {steps}  bn.num_batches_tracked {int(bn.num_batches_tracked)}")
print(f"final loss {loss.item():.4f}")
