"""Case 563 - a voice-activity helper turns gradients off for the whole process

Source: https://github.com/snakers4/silero-vad/issues/460
        "Disabling PyTorch gradient globally messes up with my training."
        (fixed by https://github.com/snakers4/silero-vad/pull/467,
        "Replace `torch.set_grad_enabled(False)` with `torch.no_grad()`")
Category: 5 - global switches are scoped

Reported symptom:
    A classifier trained on the non-speech parts of audio, with the VAD run
    on the fly in the data pipeline, stops training: the first backward()
    raises "element 0 of tensors does not require grad and does not have a
    grad_fn".

Root cause:
    get_speech_timestamps() starts with torch.set_grad_enabled(False) as a
    plain call, which switches autograd off for the whole thread and is never
    undone. The data pipeline calls it for every batch, so every training
    forward afterwards builds no graph.

Ground truth a good tool should report:
    Gradients were switched off by the plain torch.set_grad_enabled(False) in
    vad.py (make it `@torch.no_grad()` / a `with` block), or the pipeline must
    call the VAD inside `with torch.no_grad():`.
"""
import torch
import torch.nn as nn


class TinyVAD(nn.Module):
    def __init__(self, frame=16):
        super().__init__()
        self.frame = frame
        self.score = nn.Linear(frame, 1)

    def forward(self, wav):
        frames = wav.unfold(-1, self.frame, self.frame)
        return torch.sigmoid(self.score(frames)).squeeze(-1)


def get_speech_timestamps(wav, vad, threshold=0.5):
    torch.set_grad_enabled(False)  # <- CAUSE
    probs = vad(wav)
    return probs > threshold
