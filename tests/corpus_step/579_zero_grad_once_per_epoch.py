"""Case 579 - zero_grad() called once per epoch instead of once per batch

Source: https://github.com/heartcored98/Standalone-DeepLearning/issues/11
        (the lab clears gradients once per epoch while calling backward() for
        every mini-batch; the author fixed the same mistake in several labs)
Category: 3 - a step consumes exactly the gradients meant for it

Reported symptom:
    The CIFAR-10 CNN lab trains much worse than expected; within an epoch the
    loss first falls and then gets erratic, and it improves again right after
    each epoch boundary.

Root cause:
    optimizer.zero_grad() sits in the epoch loop, above the loop over
    mini-batches. Inside an epoch nothing clears .grad, so the k-th step of the
    epoch applies the sum of the gradients of the first k mini-batches.

Ground truth a good tool should report:
    Each step after the first of an epoch consumes gradients that earlier steps
    already used; the `optimizer.zero_grad()` in the epoch loop belongs inside
    the batch loop, before loss.backward().
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

images = torch.randn(320, 3, 8, 8)
labels = torch.randint(0, 10, (320,))

net = nn.Sequential(
    nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
    nn.Flatten(), nn.Linear(8 * 4 * 4, 10),
)
optimizer = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)

for epoch in range(3):
    optimizer.zero_grad()  # <- CAUSE
    running = 0.0
    for start in range(0, 320, 32):
        x, y = images[start:start + 32], labels[start:start + 32]
        loss = F.cross_entropy(net(x), y)
        loss.backward()
        optimizer.step()
        running += loss.item()
    print(f"epoch {epoch} loss {running / 10:.4f}")
