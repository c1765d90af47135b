"""Case 521 - mid-epoch validation leaves the model in eval mode for the rest of the epoch

Source: https://github.com/fartashf/vsepp/issues/4
        "that may cause the dropout and batch_norm layers will only activate in the first val_step steps for each epoch"
Category: 5 - global switches are scoped

Reported symptom:
    Results change noticeably once the mode bug is fixed: with validation every
    val_step iterations, dropout and batch-norm only behave as in training for the
    first val_step iterations of each epoch.

Root cause:
    Trainer.run_epoch() calls model.train_start() once at the start of the epoch.
    Every val_step iterations it calls validate(), which calls model.val_start()
    (eval mode) and returns without restoring training mode, so all remaining
    iterations of the epoch train in eval mode.

Ground truth a good tool should report:
    After the first validation, training steps run with Dropout/BatchNorm in eval
    mode. The eval switch in validate() (the `self.model.val_start()` line) is not
    undone; training mode must be restored after the `self.validate(...)` call
    inside the batch loop.
"""
import torch

from model import EmbeddingModel
from trainer import Trainer

torch.manual_seed(0)

base = torch.randn(320, 24)
images = base + 0.3 * torch.randn(320, 24)
texts = base + 0.3 * torch.randn(320, 24)
batches = [(images[i:i + 32], texts[i:i + 32]) for i in range(0, 256, 32)]
val = (images[256:], texts[256:])

model = EmbeddingModel()
optimizer = torch.optim.Adam(model.parameters(), lr=2e-3)
trainer = Trainer(model, optimizer, val)

for epoch in range(3):
    loss = trainer.run_epoch(batches)
print(f"steps trained in eval mode: {trainer.eval_mode_steps} of {3 * len(batches)}")
print(f"final loss {loss:.4f}")
