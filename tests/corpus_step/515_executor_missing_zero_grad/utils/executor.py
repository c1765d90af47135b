"""Case 515 - training executor never zeroes gradients between optimizer steps

Source: https://github.com/wenet-e2e/wekws/pull/73
        "when optimizer.step() is called, optimizer.zero_grad() is not called"
Category: 3 - a step consumes exactly the gradients meant for it

Reported symptom:
    The keyword-spotting model trains erratically: the loss falls for a few
    batches and then oscillates and grows, and gradient clipping fires on almost
    every step.

Root cause:
    Executor.train() runs backward, clips and steps, but never clears the
    gradients. Each step therefore applies the running sum of all gradients
    since the start of training instead of the current batch's gradient.

Ground truth a good tool should report:
    Each optimizer step consumes gradients accumulated over all previous batches;
    zero_grad is missing before the backward in utils/executor.py (the
    `loss.backward()` line is where it must be preceded by optimizer.zero_grad()).
"""
import torch
import torch.nn.functional as F


class Executor:
    def __init__(self, clip=5.0):
        self.clip = clip
        self.step = 0

    def train(self, model, optimizer, data_loader):
        model.train()
        total = 0.0
        for feats, target in data_loader:
            logits = model(feats)
            loss = F.cross_entropy(logits, target)
            loss.backward()  # <- CAUSE
            grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), self.clip)
            if torch.isfinite(grad_norm):
                optimizer.step()
            self.step += 1
            total += loss.item()
        return total / len(data_loader)
