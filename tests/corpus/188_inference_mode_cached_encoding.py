"""Case 188 - a positional table precomputed under inference_mode and multiplied into the
activations during training.

Source: a frequent report (paraphrased): "RuntimeError: Inference tensors cannot be saved
for backward" after caching a table built under torch.inference_mode().
Root cause: the table is an inference tensor; a multiplication needs to save it for
backward. Build it under torch.no_grad() (or clone it outside inference mode).
"""
import torch
from torch import nn


class Scaled(nn.Module):
    def __init__(self, length, width):
        super().__init__()
        self.proj = nn.Linear(width, width)
        with torch.inference_mode():  # <- CAUSE
            steps = torch.arange(length, dtype=torch.float32)[:, None]
            self.table = torch.cos(steps / 10.0).expand(length, width).clone()  # <- CREATED

    def forward(self, x):
        return self.proj(x) * self.table


torch.manual_seed(0)
model = Scaled(6, 4)
loss = model(torch.randn(6, 4)).pow(2).mean()
loss.backward()  # <- ERROR
