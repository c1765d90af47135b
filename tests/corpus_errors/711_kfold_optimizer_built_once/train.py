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

from cv import CrossValidator

torch.manual_seed(0)

x = torch.randn(60, 6)
y = (x[:, 0] > 0).long()
cv = CrossValidator(x, y)
scores = [cv.run_fold(k) for k in range(cv.folds)]
print("fold losses", scores)
