"""Case 589 - a hand-written checkpoint re-runs dropout with fresh masks in backward

Source: https://github.com/openai/guided-diffusion/issues/167
        (non-zero dropout with gradient checkpointing makes the loss diverge)
Category: 7 - backward has no side effects on state

Reported symptom:
    With dropout > 0 and checkpointing on, the training loss drifts upwards and
    diverges; with either of them off, the same run trains.

Root cause:
    CheckpointFunction.backward() (nn_utils.py) re-runs the checkpointed block
    without restoring the RNG state saved at forward time, so its Dropout draws
    new masks in backward and the gradient does not match the loss.

Ground truth a good tool should report:
    The recomputation in backward drew different random numbers than the
    forward (dropout masks), at the rerun in CheckpointFunction.backward();
    save the RNG state in forward and restore it before re-running (or use
    torch.utils.checkpoint, which does).
"""
import torch
import torch.nn.functional as F

from model import Denoiser

torch.manual_seed(0)

clean = torch.randn(256, 24)
model = Denoiser()
optimizer = torch.optim.Adam(model.parameters(), lr=2e-3)

for step in range(24):
    batch = clean[(step * 32) % 256:(step * 32) % 256 + 32]
    noise = torch.randn_like(batch)
    pred = model(batch + 0.5 * noise)
    loss = F.mse_loss(pred, noise)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

print(f"final loss {loss.item():.4f}")
