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
import torch
import torch.nn as nn

from trainer import Trainer

torch.manual_seed(0)

x = torch.randn(512, 10)
y = (x @ torch.randn(10, 3)).argmax(1)
batches = [(x[i:i + 16], y[i:i + 16]) for i in range(0, 512, 16)]

model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.2)
trainer = Trainer(model, optimizer, accum_steps=4)

last = trainer.fit(batches)
print(f"micro-batches {len(batches)}  optimizer updates {trainer.updates} (expected {len(batches) // 4})")
print(f"final loss {last:.4f}")
