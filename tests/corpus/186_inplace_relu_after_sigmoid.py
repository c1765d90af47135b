"""Case 186 - an in-place ReLU applied to a sigmoid's output.

Source: a frequent discuss.pytorch.org report (paraphrased): "modified by an inplace
operation ... output 0 of SigmoidBackward0" with nn.ReLU(inplace=True).
Root cause: sigmoid saves its output; the in-place ReLU writes over it.
"""
import torch
from torch import nn

torch.manual_seed(0)
fc = nn.Linear(5, 5)
act = nn.ReLU(inplace=True)  # <- CAUSE: or build it with inplace=False
x = torch.randn(3, 5)
gate = torch.sigmoid(fc(x))  # <- SAVED
out = act(gate - 0.5 + 0.5 * gate)
gated = act(gate)  # <- CAUSE
loss = (out * gated).sum()
loss.backward()  # <- ERROR
