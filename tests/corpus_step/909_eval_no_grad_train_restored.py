"""Case 909 - evaluation under no_grad with train() restored every epoch (correct)

Source: https://github.com/pytorch/tutorials/issues/1624
        "my point is that we need model.train() at the beginning of the function train()"
Category: correct (invariant 5)
EXPECT: no findings

Reported symptom:
    None. Train/test loop with Dropout and BatchNorm.

Root cause:
    None. test() switches to eval mode and evaluates inside torch.no_grad();
    train() switches back with model.train() at its start, so every training
    step runs in training mode with grad enabled.

Ground truth a good tool should report:
    Nothing. eval() and no_grad during evaluation are scoped correctly.
"""
import torch
import torch.nn as nn

torch.manual_seed(0)

x = torch.randn(512, 20)
y = (x[:, :4].sum(1) > 0).long()
train_batches = [(x[i:i + 64], y[i:i + 64]) for i in range(0, 384, 64)]
test_batches = [(x[i:i + 64], y[i:i + 64]) for i in range(384, 512, 64)]

model = nn.Sequential(
    nn.Linear(20, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Dropout(0.3), nn.Linear(64, 2)
)
loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)


def train(batches):
    model.train()
    for X, target in batches:
        loss = loss_fn(model(X), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss.item()


def test(batches):
    model.eval()
    correct = 0
    with torch.no_grad():
        for X, target in batches:
            correct += (model(X).argmax(1) == target).sum().item()
    return correct / 128


losses = []
for epoch in range(5):
    losses.append(train(train_batches))
    acc = test(test_batches)

print(f"loss {losses[0]:.4f} -> {losses[-1]:.4f}  test acc {acc:.3f}")
