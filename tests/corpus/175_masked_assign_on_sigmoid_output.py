"""Case 175 - padding positions zeroed in place on a sigmoid's output.

Source: a frequent discuss.pytorch.org report (paraphrased): "one of the variables needed
for gradient computation has been modified by an inplace operation: [torch.FloatTensor
[4, 6]], which is output 0 of SigmoidBackward0".
Root cause: sigmoid saves its output for backward; `gate[pad] = 0` writes over it.
`gate = gate.masked_fill(pad, 0)` does not.
"""
import torch
from torch import nn

torch.manual_seed(0)
proj = nn.Linear(6, 6)
x = torch.randn(4, 6)
pad = torch.zeros(4, 6, dtype=torch.bool)
pad[:, 4:] = True
gate = torch.sigmoid(proj(x))  # <- SAVED
gate[pad] = 0  # <- CAUSE
loss = (gate * x).sum()
loss.backward()  # <- ERROR
