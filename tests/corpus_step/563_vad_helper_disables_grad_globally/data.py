"""Case 563 - a voice-activity helper turns gradients off for the whole process

Source: https://github.com/snakers4/silero-vad/issues/460
        "Disabling PyTorch gradient globally messes up with my training."
Category: 5 - global switches are scoped

(see vad.py)
"""
import torch

from vad import get_speech_timestamps


def silence_only(wav, vad):
    """Zero the speech frames of each clip: the classifier learns from the rest."""
    speech = get_speech_timestamps(wav, vad)  # <- CAUSE
    mask = (~speech).repeat_interleave(vad.frame, dim=-1).float()
    return wav * mask


def batches(n=8, clips=16, length=256):
    torch.manual_seed(1)
    for _ in range(n):
        yield torch.randn(clips, length), torch.randint(0, 3, (clips,))
