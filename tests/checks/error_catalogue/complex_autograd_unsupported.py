"""nan_to_num does not support automatic differentiation for outputs with complex dtype."""

import torch

signal = torch.randn(8, dtype=torch.cfloat, requires_grad=True)
spectrum = torch.fft.fft(signal)
clean = torch.nan_to_num(spectrum)  # <- CAUSE
