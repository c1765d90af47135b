"""Case 207 - gradient clipping called after optimizer.step(): clipping never applies

Source: https://github.com/jongwook/onsets-and-frames/issues/24
        "Gradient clipping in the wrong place?" (train.py: loss.backward();
        optimizer.step(); clip_grad_norm_(...) -- maintainer: "Yeah it definitely
        should" be between backward and step).  Same bug:
        https://github.com/VGraphRNN/VGRNN/issues/4 and
        https://github.com/awslabs/graphstorm/issues/1366.
Category: training-step-order (silent)

Reported symptom:
    No error.  The --clip-gradient-norm option has no effect on training; large
    gradient spikes go straight into the weights.

Root cause:
    optimizer.step() consumes p.grad before clip_grad_norm_ rescales it; the clipped
    gradient is thrown away by the next zero_grad().  Every update uses the raw,
    unclipped gradient.

Ground truth a good tool should report:
    At `optimizer.step()` the total gradient norm is well above max_norm=0.1; the
    clip_grad_norm_ call that should bound it runs after the step.  Fix: move the
    clip between loss.backward() and optimizer.step().
    EXPECT: kind=clip_after_step; cause_line=77; read_line=76

Observed (torch 2.13, CPU):
    exit code: 0
    stdout:
        iter 0: loss=1.4043  grad norm seen by step=0.272  update/lr=0.272  (max_norm 0.1)
        iter 1: loss=1.3681  grad norm seen by step=0.260  update/lr=0.260  (max_norm 0.1)
        iter 2: loss=1.3352  grad norm seen by step=0.249  update/lr=0.249  (max_norm 0.1)
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
N_MELS, N_KEYS = 32, 12


class OnsetsAndFramesLite(nn.Module):
    def __init__(self, hidden=24):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv1d(N_MELS, hidden, 3, padding=1), nn.ReLU())
        self.onset_lstm = nn.LSTM(hidden, hidden // 2, batch_first=True, bidirectional=True)
        self.onset_fc = nn.Linear(hidden, N_KEYS)
        self.frame_fc = nn.Linear(hidden + N_KEYS, N_KEYS)

    def forward(self, mel):
        h = self.conv(mel.transpose(1, 2)).transpose(1, 2)
        onset_h, _ = self.onset_lstm(h)
        onset = self.onset_fc(onset_h)
        frame = self.frame_fc(torch.cat([h, torch.sigmoid(onset).detach()], dim=-1))
        return onset, frame


def flat_params(model):
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()])


model = OnsetsAndFramesLite()
lr, clip_gradient_norm = 0.5, 0.1
optimizer = torch.optim.SGD(model.parameters(), lr=lr)
mel = torch.randn(2, 40, N_MELS)
onset_label = (torch.rand(2, 40, N_KEYS) < 0.05).float()
frame_label = (torch.rand(2, 40, N_KEYS) < 0.2).float()

for i in range(3):
    onset, frame = model(mel)
    loss = (F.binary_cross_entropy_with_logits(onset, onset_label)
            + F.binary_cross_entropy_with_logits(frame, frame_label))
    optimizer.zero_grad()
    loss.backward()
    before = flat_params(model)
    grad_norm = torch.cat([p.grad.reshape(-1) for p in model.parameters()]).norm()
    optimizer.step()  # <- READ: consumes the unclipped gradient
    torch.nn.utils.clip_grad_norm_(model.parameters(), clip_gradient_norm)  # <- CAUSE: runs after step
    update = (flat_params(model) - before).norm() / lr
    print(f"iter {i}: loss={loss.item():.4f}  grad norm seen by step={grad_norm:.3f}"
          f"  update/lr={update:.3f}  (max_norm {clip_gradient_norm})")
