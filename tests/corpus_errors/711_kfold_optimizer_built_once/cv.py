"""Case 711 - k-fold loop rebuilds the model but reuses an optimizer built for the old one

Source: pytorch/pytorch torch/amp/grad_scaler.py assertion exercised by test/test_cuda.py grad-scaling tests (GradScaler.step: "No inf checks were recorded for this optimizer.")
Category: torch.amp.GradScaler / optimizer

Reported symptom:
    AssertionError: No inf checks were recorded for this optimizer.

Root cause:
    CrossValidator (cv.py) builds the optimizer once in __init__ for the model
    that existed at that time, and run_fold creates a fresh model for every
    fold. The loss is computed with the new model, so none of the optimizer's
    parameters ever receive a gradient; GradScaler.step unscales the
    optimizer's (gradient-less) parameters, records no inf checks and
    asserts.

Ground truth a good tool should report:
    The optimizer construction in CrossValidator.__init__ (CAUSE) is bound to
    a model that is replaced in run_fold; build it per fold from the new
    model. Raised at scaler.step in cv.py (ERROR).
"""
import torch
import torch.nn as nn


def build_model():
    return nn.Sequential(nn.Linear(6, 24), nn.ReLU(), nn.Linear(24, 2))


class CrossValidator:
    def __init__(self, x, y, folds=3, lr=1e-2):
        self.x, self.y, self.folds = x, y, folds
        self.model = build_model()
        self.opt = torch.optim.Adam(self.model.parameters(), lr=lr)  # <- CAUSE
        self.scaler = torch.amp.GradScaler("cpu")

    def run_fold(self, k, epochs=2):
        self.model = build_model()
        idx = torch.arange(len(self.x)) % self.folds != k
        xb, yb = self.x[idx], self.y[idx]
        for _ in range(epochs):
            self.opt.zero_grad()
            with torch.autocast("cpu", dtype=torch.bfloat16):
                loss = nn.functional.cross_entropy(self.model(xb).float(), yb)
            self.scaler.scale(loss).backward()
            self.scaler.step(self.opt)  # <- ERROR
            self.scaler.update()
        return loss.item()
