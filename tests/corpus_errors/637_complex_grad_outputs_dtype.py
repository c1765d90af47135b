"""Case 637 - spectral sensitivity with a complex grad_outputs for a real output

Source: pytorch/pytorch test/test_autograd.py, test_gradient_edge_output (assertRaisesRegex "required to have the same dtype")
Category: backward-arguments

Reported symptom:
    RuntimeError: For complex Tensors, both grad_output and output are required to have the same dtype. Mismatch in dtype: grad_output[0] has a dtype of torch.complex64 and output[0] has a dtype of torch.float32.

Root cause:
    The power spectrum `power = spec.abs() ** 2` is real (float32), but the vector
    passed as grad_outputs is built with torch.ones_like(spec), i.e. complex64.
    torch.autograd.grad requires a grad_output of the same complex-ness/dtype as its
    output.

Ground truth a good tool should report:
    The `weights = torch.ones_like(spec)` line used as grad_outputs: build it like the
    real `power` tensor (torch.ones_like(power)). Raised at torch.autograd.grad.
"""
import torch
from torch import nn

torch.manual_seed(0)

denoiser = nn.Sequential(nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, 64))
signal = torch.randn(3, 64, requires_grad=True)

cleaned = denoiser(signal)
spec = torch.fft.rfft(cleaned, dim=-1)
power = spec.abs() ** 2
weights = torch.ones_like(spec)  # <- CAUSE: complex, power is real
(sens,) = torch.autograd.grad(power, signal, grad_outputs=weights)  # <- ERROR
print("input sensitivity", sens.abs().mean().item())
