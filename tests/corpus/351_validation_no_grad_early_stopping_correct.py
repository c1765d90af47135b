"""Correct 351 - validation under torch.no_grad() + model.eval(), early stopping, best-weights restore

Source: the corrected validation loop of https://github.com/skorch-dev/skorch/pull/219
        (validation wrapped in torch.no_grad()) and https://github.com/hszhao/semseg/issues/60;
        early stopping with a deep-copied best state_dict
Category: correct script (validation that builds no graph; weights restored in place)

What it does:
    A GRU sequence classifier.  Each epoch: train mode, normal steps; then eval mode
    and a validation loop entirely inside torch.no_grad(), collecting logits for the
    epoch metric (they carry no graph).  The best state_dict is deep-copied; after
    `patience` epochs without improvement training stops and the best weights are
    loaded back with load_state_dict (an in-place copy into the parameters, outside
    any graph).  The final test pass uses torch.inference_mode().

Ground truth a good tool should report:
    EXPECT: no findings

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        epoch 0: train 1.1294 val 1.0855 *
        epoch 1: train 0.9979 val 1.0210 *
        epoch 2: train 0.8420 val 0.7756 *
        epoch 3: train 0.5905 val 0.7104 *
        epoch 4: train 0.4342 val 0.7483
        epoch 5: train 0.3929 val 0.9095
        early stop after epoch 5; best val 0.7104 at epoch 3
        restored val loss 0.7104 | collected logits require grad: False
        test accuracy 0.719
"""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SeqClassifier(nn.Module):
    def __init__(self, feat=5, hidden=16, n_classes=3):
        super().__init__()
        self.gru = nn.GRU(feat, hidden, batch_first=True)
        self.drop = nn.Dropout(0.2)
        self.out = nn.Linear(hidden, n_classes)

    def forward(self, seq):
        _, h = self.gru(seq)
        return self.out(self.drop(h[-1]))


def make_split(n):
    seq = torch.randn(n, 12, 5)
    return seq, (seq[:, :, 0].mean(1) * 4).round().clamp(-1, 1).long() + 1


model = SeqClassifier()
optimizer = torch.optim.Adam(model.parameters(), lr=4e-2)
train_x, train_y = make_split(96)
val_x, val_y = make_split(48)
test_x, test_y = make_split(32)


def validate():
    model.eval()
    logits_all = []
    with torch.no_grad():
        for start in range(0, 48, 16):
            logits_all.append(model(val_x[start:start + 16]))
    logits = torch.cat(logits_all)
    return F.cross_entropy(logits, val_y).item(), logits


best_val, best_epoch, best_state, patience, bad = float("inf"), -1, None, 2, 0
for epoch in range(8):
    model.train()
    total = 0.0
    for start in range(0, 96, 24):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(train_x[start:start + 24]), train_y[start:start + 24])
        loss.backward()
        optimizer.step()
        total += loss.item()
    val_loss, _ = validate()
    improved = val_loss < best_val - 1e-4
    print(f"epoch {epoch}: train {total / 4:.4f} val {val_loss:.4f}" + (" *" if improved else ""))
    if improved:
        best_val, best_epoch, bad = val_loss, epoch, 0
        best_state = copy.deepcopy(model.state_dict())
    else:
        bad += 1
        if bad >= patience:
            print(f"early stop after epoch {epoch}; best val {best_val:.4f} at epoch {best_epoch}")
            break

model.load_state_dict(best_state)
restored, logits = validate()
print(f"restored val loss {restored:.4f} | collected logits require grad: {logits.requires_grad}")
with torch.inference_mode():
    test_acc = (model(test_x).argmax(1) == test_y).float().mean().item()
print(f"test accuracy {test_acc:.3f}")
