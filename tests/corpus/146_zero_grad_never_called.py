"""Case 146 - optimizer.zero_grad() never called: every step adds all previous gradients

Source: https://github.com/IBM/aihwkit/issues/446 "Missing zero_grad() call"
        (examples/01_simple_layer.py and 02_multiple_layers.py: "the loss decrease then
        increase again"; "simply adding opt.zero_grad() after each opt.step() should be
        sufficient"; maintainer: "you are right"); same bug:
        https://github.com/wenet-e2e/wekws/issues/72
Category: training-step protocol (stale gradient accumulation)

Reported symptom:
    No error.  The training loss goes down for a few epochs, then climbs back up
    and oscillates; with zero_grad() it decreases monotonically.

Root cause:
    backward() accumulates into .grad.  With no zero_grad() anywhere, the gradient
    used by step k is the sum of the gradients of steps 0..k, so the update keeps
    pushing in stale directions with a growing magnitude (heavy, undamped momentum).

Ground truth a good tool should report:
    At `opt.step()` (line 58) every parameter's .grad holds the sum of all
    backward() calls since the start (line 57 accumulates onto the gradient the
    previous step already used); nothing ever resets it.  Fix: call
    `opt.zero_grad()` before `loss.backward()` or after `opt.step()`.
    EXPECT: kind=grad_never_zeroed; cause_line=57,58

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        epoch 0: loss 0.4468
        epoch 1: loss 0.2568
        epoch 2: loss 0.0896
        epoch 3: loss 0.0671
        epoch 4: loss 0.0872
        ... (rises, then stays near 0.11)
        epoch 11: loss 0.1130
        lowest loss 0.0671 at epoch 3, final loss 0.1130 at epoch 11
        grad used at the last step / grad of the last batch: 31.21x
"""
import torch
import torch.nn as nn

torch.manual_seed(0)

# two stacked fully connected layers, as in the multiple-layers example
model = nn.Sequential(nn.Linear(4, 6), nn.Sigmoid(), nn.Linear(6, 2), nn.Sigmoid())
opt = torch.optim.SGD(model.parameters(), lr=0.5)
x = torch.tensor([[0.1, 0.2, 0.4, 0.3], [0.2, 0.1, 0.1, 0.3]])
y = torch.tensor([[1.0, 0.5], [0.7, 0.3]])
mse = nn.MSELoss(reduction="sum")

history = []
for epoch in range(12):
    pred = model(x)
    loss = mse(pred, y)
    if epoch == 11:
        fresh = torch.autograd.grad(loss, model[0].weight, retain_graph=True)[0]
    loss.backward()  # <- CAUSE: accumulates onto the gradient of every earlier epoch
    opt.step()  # <- CAUSE: no zero_grad() follows (or precedes the next backward)
    history.append(loss.item())
    print(f"epoch {epoch}: loss {loss.item():.4f}")

best = min(range(len(history)), key=history.__getitem__)
print(f"lowest loss {history[best]:.4f} at epoch {best}, final loss {history[-1]:.4f} at epoch 11")
print(f"grad used at the last step / grad of the last batch: "
      f"{(model[0].weight.grad.norm() / fresh.norm()).item():.2f}x")
