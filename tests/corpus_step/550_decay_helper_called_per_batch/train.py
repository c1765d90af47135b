"""Case 550 - a per-step learning-rate decay helper called inside the batch loop

Source: https://github.com/amoudgl/pygoturn/issues/16
        "when itr > 0 and itr % args.lr_decay_step == 0, the lr should become 0.1*lr.
         However, the lr will continue decreasing until done==1. And the number of
         decreasing is related with batchsize."
Category: 4 - a step changes what it should and nothing else

Reported symptom:
    The learning rate should drop by 10x once every lr_decay_step iterations.
    Instead it keeps dropping as long as the training loop is inside the batch
    loop of that iteration, so after the first decay point it is many orders of
    magnitude too small and the tracker stops learning; the larger the batch
    count per iteration, the more it drops.

Root cause:
    The decay condition depends on the iteration counter `itr`, which only moves
    once per pass over the data, but the call sits inside the per-batch loop: every
    batch of iteration `itr` finds the condition true again and multiplies the
    learning rate by gamma once more.

Ground truth a good tool should report:
    The learning rate falls by the same factor at every step until it is ~0; the
    call of exp_lr_scheduler inside the batch loop in train.py is the line to move
    (to just after the batch loop, once per iteration).
"""
import torch
import torch.nn.functional as F

from helper import exp_lr_scheduler
from model import Regressor

torch.manual_seed(0)

x = torch.randn(600, 10)
y = x[:, :4] * 0.5 + torch.tanh(x[:, 4:8])

model = Regressor()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4)
lr_decay_step = 2

for itr in range(4):
    for batch in range(15):
        idx = torch.randint(0, 600, (32,))
        optimizer.zero_grad()
        loss = F.l1_loss(model(x[idx]), y[idx])
        loss.backward()
        optimizer.step()
        if itr > 0 and itr % lr_decay_step == 0:
            exp_lr_scheduler(optimizer, gamma=0.1)  # <- CAUSE
    print(f"iteration {itr}: lr {optimizer.param_groups[0]['lr']:.1e}, loss {loss.item():.4f}")
