"""Case 509 - range initialisation replaces quantizer scales after the optimizer took them

Source: https://github.com/openvinotoolkit/nncf/pull/327
        "replacing the parameter as a whole during such initialization will break the gradient updates."
Category: 2 - every gradient backward produces is consumed

Reported symptom:
    In quantization-aware training the learnable quantizer scales never change
    after range initialisation, and accuracy lags behind the expected QAT result.

Root cause:
    The compression controller's range initialisation runs after the training
    script has built the optimizer. It assigns a brand-new nn.Parameter to each
    quantizer's `scale` instead of copying the statistics into the existing one.
    Backward then produces gradients for the new scale tensors, which no optimizer
    holds, while the optimizer keeps stepping the orphaned old scales.

Ground truth a good tool should report:
    The quantizer scales used in forward get gradients that are never consumed;
    the optimizer's own scale tensors are no longer used by the model. The
    parameters were replaced after the optimizer was built, in compression.py
    (the `quantizer.scale = nn.Parameter(...)` line in initialize_ranges).
"""
import torch
import torch.nn.functional as F

from compression import CompressionController
from model import QuantMLP

torch.manual_seed(0)

x = torch.randn(512, 12)
y = (x[:, :4] * 2 + 0.2 * torch.randn(512, 4)).argmax(1)

model = QuantMLP()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)

controller = CompressionController(model)
controller.initialize_ranges(x[:128])
scale_before = model.q1.scale.item()

for step in range(30):
    idx = torch.randint(0, 512, (64,))
    loss = F.cross_entropy(model(x[idx]), y[idx])
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

print(f"final loss {loss.item():.4f}  q1 scale {scale_before:.4f} -> {model.q1.scale.item():.4f}")
