"""Case 709 - AMP trainer unscales gradients for logging and again inside the clipping helper

Source: pytorch/pytorch test/test_cuda.py, test_grad_scaling_clipping_separate_unscale (documented order: scale -> backward -> unscale_ once -> clip -> step -> update); GradScaler.unscale_ raises when called twice per update
Category: torch.amp.GradScaler

Reported symptom:
    RuntimeError: unscale_() has already been called on this optimizer since the last update().

Root cause:
    AmpTrainer.train_step calls scaler.unscale_(opt) to log the true gradient
    norm, then calls the _clip_gradients helper, which calls
    scaler.unscale_(opt) a second time before clipping. GradScaler tracks the
    per-optimizer stage and allows only one unscale_ between two update()
    calls (a second one would divide the gradients by the scale twice).

Ground truth a good tool should report:
    The redundant scaler.unscale_ inside AmpTrainer._clip_gradients
    (CAUSE/ERROR) — gradients were already unscaled in train_step.
"""
import torch
import torch.nn as nn


class AmpTrainer:
    def __init__(self, model, lr=1e-3, max_norm=1.0):
        self.model = model
        self.opt = torch.optim.AdamW(model.parameters(), lr=lr)
        self.scaler = torch.amp.GradScaler("cpu")
        self.max_norm = max_norm
        self.grad_norms = []

    def _grad_norm(self):
        return torch.norm(torch.stack([p.grad.norm() for p in self.model.parameters() if p.grad is not None]))

    def _clip_gradients(self):
        self.scaler.unscale_(self.opt)  # <- CAUSE,ERROR
        nn.utils.clip_grad_norm_(self.model.parameters(), self.max_norm)

    def train_step(self, x, y):
        self.opt.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = nn.functional.cross_entropy(self.model(x).float(), y)
        self.scaler.scale(loss).backward()
        self.scaler.unscale_(self.opt)
        self.grad_norms.append(self._grad_norm().item())
        self._clip_gradients()
        self.scaler.step(self.opt)
        self.scaler.update()
        return loss.item()
