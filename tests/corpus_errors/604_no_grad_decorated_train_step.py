"""Case 604 - a shared batch helper decorated with @torch.no_grad() used for training

Source: pytorch/pytorch test/test_autograd.py, test_no_grad (assertRaises RuntimeError on backward of a no_grad result)
Category: grad-mode

Reported symptom:
    RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn

Root cause:
    run_batch was written for validation and decorated with @torch.no_grad(), then
    reused for the training step. Everything it computes, including the loss, is
    built with grad mode off, so the loss has no grad_fn and requires_grad=False;
    calling backward() on it has nothing to differentiate.

Ground truth a good tool should report:
    The @torch.no_grad() decorator on run_batch disables graph recording for the
    training loss; remove it (or use a separate eval helper). The error surfaces at
    loss.backward() in the training loop.
"""
import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 3))
opt = torch.optim.SGD(model.parameters(), lr=0.1)


@torch.no_grad()  # <- CAUSE: the training loss is computed with grad disabled
def run_batch(net, x, y):
    logits = net(x)
    loss = F.cross_entropy(logits, y)
    acc = (logits.argmax(1) == y).float().mean()
    return loss, acc


x_train, y_train = torch.randn(64, 10), torch.randint(0, 3, (64,))
x_val, y_val = torch.randn(32, 10), torch.randint(0, 3, (32,))

for epoch in range(2):
    model.train()
    for i in range(0, 64, 16):
        loss, acc = run_batch(model, x_train[i:i + 16], y_train[i:i + 16])
        opt.zero_grad()
        loss.backward()  # <- ERROR
        opt.step()
    model.eval()
    val_loss, val_acc = run_batch(model, x_val, y_val)
    print(f"epoch {epoch} val_loss {val_loss.item():.3f} val_acc {val_acc.item():.2f}")
