"""Case 144 - a leftover optimizer.step() runs again with no backward since the last step

Source: https://github.com/mzolfaghari/ECO-pytorch/pull/1 "Misplaced optimizer step"
        ("fixes duplicate optimizer step when using iter_size > 1. Original code
        performed step even outside the iter_size 'if' clause"; commit 2b56902
        "Eliminating optimizer step outside of iter_size clause")
Category: training-step protocol (loop restructured for accumulation)

Reported symptom:
    No error.  With iter_size > 1 the optimizer steps more often than once per
    accumulation window and accuracy is worse than with iter_size = 1; removing the
    second step improves it.

Root cause:
    When gradient accumulation was added, `optimizer.step(); optimizer.zero_grad()`
    went into the `if (i + 1) % iter_size == 0` branch but the old unconditional
    `optimizer.step()` at the end of the loop body stayed.  Right after a window is
    stepped and zeroed, that leftover step runs again with no backward() in between:
    SGD momentum and weight decay move every weight a second time on an all-zero
    gradient (and inside a window it steps on a half-accumulated gradient).

Ground truth a good tool should report:
    `optimizer.step()` at line 73 runs with no backward() since the previous
    `optimizer.step()` at line 69 (the gradients were zeroed at line 70 and are
    still all zero); it is the pre-accumulation step left outside the window branch.
    Fix: delete it.
    EXPECT: kind=step_without_backward; cause_line=73; previous_step_line=69

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        windows: 3 | optimizer steps: 9
        iter 1: extra step, |grad| = 0.0, weights moved by 0.02910
        iter 3: extra step, |grad| = 0.0, weights moved by 0.05239
        iter 5: extra step, |grad| = 0.0, weights moved by 0.05696
"""
import torch
import torch.nn as nn

torch.manual_seed(0)


class ClipClassifier(nn.Module):
    """TSN-style: shared per-frame encoder, average consensus over frames, linear head."""

    def __init__(self, feat=12, n_classes=5):
        super().__init__()
        self.frame = nn.Sequential(nn.Linear(feat, 16), nn.ReLU())
        self.fc = nn.Linear(16, n_classes)

    def forward(self, clips):  # clips: (batch, frames, feat)
        return self.fc(self.frame(clips).mean(dim=1))


model = ClipClassifier()
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4)
iter_size = 2
batches = [(torch.randn(4, 6, 12), torch.randint(0, 5, (4,))) for _ in range(6)]

n_steps, n_windows, extra = 0, 0, []
optimizer.zero_grad(set_to_none=False)  # keep the .grad buffers allocated between windows
for i, (clips, target) in enumerate(batches):
    loss = criterion(model(clips), target) / iter_size
    loss.backward()

    if (i + 1) % iter_size == 0:
        torch.nn.utils.clip_grad_norm_(model.parameters(), 20.0)
        optimizer.step()  # <- READ: the accumulated window is applied here
        optimizer.zero_grad(set_to_none=False)
        n_steps, n_windows = n_steps + 1, n_windows + 1
    before = [p.detach().clone() for p in model.parameters()]
    optimizer.step()  # <- CAUSE: leftover per-iteration step; after a window it runs with no new backward
    n_steps += 1
    if (i + 1) % iter_size == 0:
        grad_norm = torch.nn.utils.get_total_norm([p.grad for p in model.parameters()]).item()
        moved = sum((p.detach() - b).norm() ** 2 for p, b in zip(model.parameters(), before)) ** 0.5
        extra.append(f"iter {i}: extra step, |grad| = {grad_norm}, weights moved by {moved.item():.5f}")

print(f"windows: {n_windows} | optimizer steps: {n_steps}")
print("\n".join(extra))
