"""Case 962 - a new model and a new optimizer for every cross-validation fold (correct)

Source: https://github.com/IoBT-VISTEC/MIN2Net/issues/1
        (the optimizer must be created again in every fold, next to the fold's model)
Category: correct (invariant 2)
EXPECT: no findings

Reported symptom:
    None. k-fold cross-validation builds the model several times from one class;
    each fold builds its own optimizer right after its model.

Root cause:
    None. Several instances of one model class are made over the run, and each one
    is trained by the optimizer built over it.

Ground truth a good tool should report:
    Nothing.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self, d_in=12, hidden=32, n_classes=2):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.head = nn.Linear(hidden, n_classes)

    def forward(self, x):
        return self.head(self.body(x))


x = torch.randn(300, 12)
y = (x[:, 0] + x[:, 1] * x[:, 2] > 0).long()
folds = torch.arange(300) % 3

scores = []
for fold in range(3):
    train_idx, val_idx = (folds != fold).nonzero().squeeze(1), (folds == fold).nonzero().squeeze(1)
    model = Net()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    for step in range(10):
        idx = train_idx[torch.randint(0, len(train_idx), (64,))]
        loss = F.cross_entropy(model(x[idx]), y[idx])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    with torch.no_grad():
        scores.append((model(x[val_idx]).argmax(1) == y[val_idx]).float().mean().item())

print("fold accuracies", [round(s, 3) for s in scores])
