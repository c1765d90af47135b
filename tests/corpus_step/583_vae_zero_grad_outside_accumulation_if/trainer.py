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
import torch.nn.functional as F


class VAETrainer:
    def __init__(self, vae, accumulate, lr=1e-3):
        self.vae, self.accumulate = vae, accumulate
        self.opt = torch.optim.Adam(vae.parameters(), lr=lr)
        self.micro = 0

    def fit_epoch(self, frames, micro_batch):
        total = 0.0
        for start in range(0, len(frames), micro_batch):
            x = frames[start:start + micro_batch]
            recon, mu, logvar = self.vae(x)
            kl = -0.5 * (1 + logvar - mu.pow(2) - logvar.exp()).sum(1).mean()
            loss = (F.binary_cross_entropy(recon, x) + 1e-3 * kl) / self.accumulate
            loss.backward()
            self.micro += 1
            if self.micro % self.accumulate == 0:
                self.opt.step()
            self.opt.zero_grad()  # <- CAUSE
            total += loss.item()
        return total
