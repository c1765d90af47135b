"""Case 141 - clip_grad_norm_ called after optimizer.step(): the clip never reaches an update

Source: https://github.com/jongwook/onsets-and-frames/issues/24
        "Gradient clipping in the wrong place?" (train.py calls clip_grad_norm_ after
        loss.backward() and optimizer.step(); maintainer: "Yeah it definitely should");
        same ordering bug: https://github.com/VGraphRNN/VGRNN/issues/4 and
        https://github.com/awslabs/graphstorm/issues/1366
Category: training-step protocol (work that is thrown away)

Reported symptom:
    No error.  `--clip-gradient-norm` has no effect on training: the parameter update
    is as large as without clipping.

Root cause:
    The loop runs zero_grad -> backward -> optimizer.step() -> clip_grad_norm_.  step()
    has already consumed the raw gradient when clip_grad_norm_ rescales .grad, and the
    clipped gradient is then wiped by zero_grad() at the top of the next iteration
    without ever being read.  The clip must sit between backward() and step().

Ground truth a good tool should report:
    The in-place rescale of every `.grad` by clip_grad_norm_ at line 70 is never
    read: the next access to those gradients is `optimizer.zero_grad()` (line 65)
    of the following iteration; the optimizer step at line 69 used the unclipped
    gradient.  Fix: move the clip above `optimizer.step()`.
    EXPECT: kind=clip_after_step; cause_line=70; step_line=69

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        step 0: grad norm 0.173 (max 0.05) | update norm / lr 0.173
        step 1: grad norm 0.171 (max 0.05) | update norm / lr 0.171
        step 2: grad norm 0.165 (max 0.05) | update norm / lr 0.165
        the applied update was never clipped: True
"""
import torch
import torch.nn as nn

torch.manual_seed(0)


class FrameTranscriber(nn.Module):
    """Tiny onset detector: a GRU over spectrogram frames, one logit per pitch."""

    def __init__(self, n_bins=16, n_pitches=8):
        super().__init__()
        self.rnn = nn.GRU(n_bins, 24, batch_first=True)
        self.head = nn.Linear(24, n_pitches)

    def forward(self, spec):
        h, _ = self.rnn(spec)
        return self.head(h)


model = FrameTranscriber()
lr, clip_norm = 0.05, 0.05
optimizer = torch.optim.SGD(model.parameters(), lr=lr)
criterion = nn.BCEWithLogitsLoss()

clipped_ever = False
for step in range(3):
    spec = torch.randn(4, 20, 16) * 3.0
    onsets = (torch.rand(4, 20, 8) > 0.8).float()
    before = [p.detach().clone() for p in model.parameters()]

    optimizer.zero_grad()
    loss = criterion(model(spec), onsets)
    loss.backward()
    grad_norm = torch.nn.utils.get_total_norm([p.grad for p in model.parameters()])
    optimizer.step()  # <- READ: consumes the raw, unclipped gradient
    torch.nn.utils.clip_grad_norm_(model.parameters(), clip_norm)  # <- CAUSE: clips .grad after the step already used it

    moved = torch.sqrt(sum(((p.detach() - b) ** 2).sum() for p, b in zip(model.parameters(), before)))
    applied = (moved / lr).item()
    clipped_ever |= applied <= clip_norm * 1.01
    print(f"step {step}: grad norm {grad_norm:.3f} (max {clip_norm}) | update norm / lr {applied:.3f}")

print("the applied update was never clipped:", not clipped_ever)
