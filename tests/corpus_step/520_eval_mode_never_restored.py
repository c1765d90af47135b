"""Case 520 - test() switches the model to eval mode and train() never switches back

Source: https://github.com/pytorch/tutorials/issues/1624
        "In the second epoch, the layers are still in evaluation mode, and train() is called."
Category: 5 - global switches are scoped

Reported symptom:
    From the second epoch on, dropout is disabled and batch-norm uses (and stops
    updating) its running statistics during training; training behaves
    differently from the first epoch and the regularisation silently disappears.

Root cause:
    test() calls model.eval() before evaluating, but train() never calls
    model.train(). The module-wide training flag set by test() stays in force for
    every later training epoch.

Ground truth a good tool should report:
    Training steps after the first epoch run with the model (Dropout, BatchNorm1d)
    in eval mode; the mode was switched by `model.eval()` in test() and never
    restored before the next train() call.
"""
import torch
import torch.nn as nn

torch.manual_seed(0)

x = torch.randn(512, 20)
y = (x[:, :4].sum(1, keepdim=True) > 0).long().squeeze(1)
train_batches = [(x[i:i + 64], y[i:i + 64]) for i in range(0, 384, 64)]
test_batches = [(x[i:i + 64], y[i:i + 64]) for i in range(384, 512, 64)]

model = nn.Sequential(
    nn.Linear(20, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Dropout(0.5), nn.Linear(64, 2)
)
loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)


def train(batches, model, loss_fn, optimizer):
    for X, target in batches:
        loss = loss_fn(model(X), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss.item()


def test(batches, model, loss_fn):
    model.eval()  # <- CAUSE
    correct, total = 0, 0
    with torch.no_grad():
        for X, target in batches:
            correct += (model(X).argmax(1) == target).sum().item()
            total += len(target)
    return correct / total


for t in range(4):
    loss = train(train_batches, model, loss_fn, optimizer)
    acc = test(test_batches, model, loss_fn)
    print(f"epoch {t}: train loss {loss:.4f}  test acc {acc:.3f}  training flag {model.training}")

print(f"final loss {loss:.4f}")
