"""Case 563 - a voice-activity helper turns gradients off for the whole process

Source: https://github.com/snakers4/silero-vad/issues/460
        "Disabling PyTorch gradient globally messes up with my training."
        (fixed by https://github.com/snakers4/silero-vad/pull/467,
        "Replace `torch.set_grad_enabled(False)` with `torch.no_grad()`")
Category: 5 - global switches are scoped

Reported symptom:
    The first backward() raises "element 0 of tensors does not require grad
    and does not have a grad_fn", although nothing in the training loop
    disables gradients.

Root cause:
    vad.get_speech_timestamps() calls torch.set_grad_enabled(False) as a plain
    function: grad mode stays off after it returns, for every forward of the
    classifier that follows.

Ground truth a good tool should report:
    The plain set_grad_enabled(False) in vad.py left gradients off (or the call
    to it in data.py, which could wrap it in `with torch.no_grad():`).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from data import batches, silence_only
from vad import TinyVAD

torch.manual_seed(0)
vad = TinyVAD().requires_grad_(False)
classifier = nn.Sequential(nn.Linear(256, 64), nn.ReLU(), nn.Linear(64, 3))
optimizer = torch.optim.Adam(classifier.parameters(), lr=1e-3)

for wav, label in batches():
    features = silence_only(wav, vad)
    loss = F.cross_entropy(classifier(features), label)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f"final loss {loss.item():.4f}")
