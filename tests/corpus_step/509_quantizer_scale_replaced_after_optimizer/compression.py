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
import torch.nn as nn

from quant import FakeQuantize


class CompressionController:
    def __init__(self, model):
        self.model = model

    def initialize_ranges(self, calib_x):
        """Set every quantizer's scale from the max |activation| seen on calibration data."""
        stats, hooks = {}, []
        for module in self.model.modules():
            if isinstance(module, FakeQuantize):
                hooks.append(module.register_forward_pre_hook(
                    lambda m, inp: stats.__setitem__(m, inp[0].abs().max().item())))
        with torch.no_grad():
            self.model(calib_x)
        for h in hooks:
            h.remove()
        for quantizer, amax in stats.items():
            quantizer.scale = nn.Parameter(torch.tensor(amax / quantizer.qmax))  # <- CAUSE
