"""Case 588 - activation checkpointing recomputes Conv+BatchNorm blocks in backward

Source: https://github.com/Tencent/YOLO-Master/issues/262
        (checkpoint recomputation updates training-mode BatchNorm statistics twice)
Category: 7 - backward has no side effects on state

Reported symptom:
    A model trained with activation checkpointing for memory evaluates worse
    than the same model trained without it, although losses and gradients are
    identical: after N steps num_batches_tracked reads 2N and the running
    statistics have moved twice per batch.

Root cause:
    BaseModel.run_layer() (model.py) checkpoints each Conv block, whose
    BatchNorm2d runs in train mode; the recomputation in backward updates the
    running statistics a second time.

Ground truth a good tool should report:
    Backward changed module buffers (BatchNorm running statistics): the
    checkpoint call in run_layer() re-ran a BatchNorm in train mode. Keep
    BatchNorm out of the checkpointed segment or stop its update on the rerun.
"""
import torch
import torch.nn.functional as F

from model import BaseModel

torch.manual_seed(0)

x = torch.randn(96, 3, 12, 12)
y = (x[:, 0].mean((1, 2)) > 0).long() + 2 * (x[:, 1].mean((1, 2)) > 0).long()
batches = [(x[i:i + 16], y[i:i + 16]) for i in range(0, 96, 16)]

model = BaseModel(checkpointing=True)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)

for epoch in range(2):
    for images, labels in batches:
        images = images.clone().requires_grad_()
        loss = F.cross_entropy(model(images), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

bn = model.layers[0].bn
print(f"steps {2 * len(batches)}  num_batches_tracked {int(bn.num_batches_tracked)}")
print(f"final loss {loss.item():.4f}")
