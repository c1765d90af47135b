"""Case 583 - zero_grad() runs after every micro-batch, outside the accumulation condition

Source: https://github.com/gaozhihan/PreDiff/issues/32
        "you call .zero_grad() outside the IF condition in your VAE training
        script ... Otherwise the accumulated gradient ... will be erased."
Category: 3 - a step consumes exactly the gradients meant for it

Reported symptom:
    Training the VAE with gradient accumulation gives the same noisy curves
    as without it; raising the accumulation count changes nothing but the
    number of updates.

Root cause:
    In the trainer the optimizer steps only when the accumulation counter is
    reached, but opt.zero_grad() is indented one level too far out, at the
    level of the `if`: it runs after every micro-batch and erases the
    gradients of the micro-batches before the last one of each window.

Ground truth a good tool should report:
    Gradients produced by backward are discarded before any step uses them;
    the `self.opt.zero_grad()` in trainer.py belongs inside the `if`, after
    self.opt.step().
"""
import torch

from trainer import VAETrainer
from vae import VAE

torch.manual_seed(0)

frames = torch.rand(384, 1, 8, 8)
trainer = VAETrainer(VAE(), accumulate=4)
for epoch in range(2):
    loss = trainer.fit_epoch(frames, micro_batch=16)

print(f"final loss {loss:.4f}")
