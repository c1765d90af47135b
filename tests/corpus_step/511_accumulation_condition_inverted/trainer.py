"""Case 511 - gradient-accumulation condition inverted: steps on the wrong micro-batches

Source: https://github.com/huggingface/accelerate/issues/435
        "`optimizer.step()` is getting called in step `1,2,3,4,6,7,8,9,11,...` instead it should be getting called in step `0,5,10,15,20,...`"
Category: 3 - a step consumes exactly the gradients meant for it

Reported symptom:
    With gradient_accumulation_steps=4 the effective batch is not 4 micro-batches:
    the optimizer steps on almost every micro-batch, each time with a gradient
    that was divided by 4, and sometimes with two micro-batches mixed together.

Root cause:
    Trainer.fit() tests `if step % self.accum_steps:`, which is true on every step
    *except* the multiples of accum_steps. The accumulation window is inverted:
    most steps consume a single down-scaled micro-batch gradient, and the ones at
    multiples of 4 are merged into the following step.

Ground truth a good tool should report:
    Optimizer steps consume 1 or 2 micro-batch gradients instead of windows of 4;
    the accumulation condition in trainer.py is inverted (the
    `if step % self.accum_steps:` line).
"""
import torch.nn.functional as F


class Trainer:
    def __init__(self, model, optimizer, accum_steps=4):
        self.model = model
        self.optimizer = optimizer
        self.accum_steps = accum_steps
        self.updates = 0

    def fit(self, batches):
        self.optimizer.zero_grad()
        for step, (x, y) in enumerate(batches):
            loss = F.cross_entropy(self.model(x), y) / self.accum_steps
            loss.backward()
            if step % self.accum_steps:  # <- CAUSE
                self.optimizer.step()
                self.optimizer.zero_grad()
                self.updates += 1
        return loss.item() * self.accum_steps
