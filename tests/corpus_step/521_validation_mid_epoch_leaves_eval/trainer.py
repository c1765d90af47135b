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
import torch.nn.functional as F


def contrastive_loss(a, b, margin=0.2):
    a, b = F.normalize(a, dim=1), F.normalize(b, dim=1)
    scores = a @ b.t()
    diag = scores.diag()[:, None]
    cost = (margin + scores - diag).clamp(min=0)
    return cost.fill_diagonal_(0).sum() / a.shape[0]


class Trainer:
    def __init__(self, model, optimizer, val_data, val_step=3):
        self.model, self.optimizer = model, optimizer
        self.val_data, self.val_step = val_data, val_step
        self.eval_mode_steps = 0

    def validate(self):
        self.model.val_start()  # <- CAUSE
        with torch.no_grad():
            img, txt = self.model(*self.val_data)
            return contrastive_loss(img, txt).item()

    def run_epoch(self, batches):
        self.model.train_start()
        for i, (img, txt) in enumerate(batches):
            self.eval_mode_steps += int(not self.model.img_enc.training)
            loss = contrastive_loss(*self.model(img, txt))
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            if (i + 1) % self.val_step == 0:
                self.validate()  # <- CAUSE
        return loss.item()
