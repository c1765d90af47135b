"""Case 143 - optimizer.zero_grad() between loss.backward() and optimizer.step()

Source: https://velog.io/@rhss10/기본-optimizer.zerograd는-어디에-넣어주어야-할까
        (Q&A write-up on where zero_grad() may go: anywhere in the loop "as long as it
        is not put between loss.backward() and optimizer.step()"); the placement
        question recurs in https://github.com/pytorch/tutorials/issues/2799 and
        https://github.com/yunjey/pytorch-tutorial/issues/238
Category: training-step protocol (work that is thrown away)

Reported symptom:
    No error, but the model never learns: the epoch loss is identical epoch after
    epoch and the weights after training equal the initial weights.

Root cause:
    The loop was reordered and `optimizer.zero_grad()` ended up after
    `loss.backward()` and before `optimizer.step()`.  The gradients backward() just
    computed are discarded without being read (zero_grad sets them to None), so
    step() finds no gradient and skips every parameter.

Ground truth a good tool should report:
    The gradients written by `loss.backward()` at line 67 are cleared by
    `optimizer.zero_grad()` at line 69 before anything reads them; the following
    `optimizer.step()` (line 70) has no gradient for any parameter.  Fix: move
    zero_grad() before the forward pass (or after step()).
    EXPECT: kind=grad_discarded_before_step; cause_line=69; backward_line=67;
            step_line=70

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        epoch 0: mean loss 1.0615
        epoch 1: mean loss 1.0615
        epoch 2: mean loss 1.0615
        weights identical to initial weights: True
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ActivityNet(nn.Module):
    """1-D conv net for accelerometer windows (3 axes x 32 samples) -> 3 activities."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(3, 8, kernel_size=5, padding=2)
        self.fc = nn.Linear(8, 3)

    def forward(self, x):
        h = F.relu(self.conv(x)).mean(dim=2)
        return self.fc(h)


model = ActivityNet()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
windows = torch.randn(24, 3, 32)
labels = torch.randint(0, 3, (24,))
initial = {k: v.clone() for k, v in model.state_dict().items()}

for epoch in range(3):
    running = 0.0
    for start in range(0, 24, 8):
        xb, yb = windows[start:start + 8], labels[start:start + 8]
        loss = F.cross_entropy(model(xb), yb)
        loss.backward()  # <- CREATED: the gradient of this batch
        running += loss.item()
        optimizer.zero_grad()  # <- CAUSE: wipes the gradient before step() reads it
        optimizer.step()
    print(f"epoch {epoch}: mean loss {running / 3:.4f}")

same = all(torch.equal(initial[k], v) for k, v in model.state_dict().items())
print("weights identical to initial weights:", same)
