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

from engine import AmpTrainer

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(16, 64), nn.GELU(), nn.Linear(64, 4))
trainer = AmpTrainer(model)
x = torch.randn(32, 16)
y = torch.randint(0, 4, (32,))
for step in range(3):
    loss = trainer.train_step(x, y)
    print("step", step, "loss", round(loss, 4), "grad norm", trainer.grad_norms[-1])
