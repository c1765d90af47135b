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
import torch.nn.functional as F

from model import Denoiser

torch.manual_seed(0)

clean = torch.sin(torch.linspace(0, 6.28, 16)[None, :] * torch.randint(1, 4, (512, 1)))

model = Denoiser()
optimizer = torch.optim.Adam(model.parameters(), lr=2e-3)

for step in range(30):
    idx = torch.randint(0, 512, (64,))
    noise = torch.randn(64, 16) * 0.5
    pred = model(clean[idx] + noise)
    loss = F.mse_loss(pred, noise)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

print(f"final loss {loss.item():.4f}")
