"""Case 631 - training with anomaly detection and a custom norm op (entry point)

Source: pytorch/pytorch test/test_autograd.py, test_anomaly_detect_nan (assertRaisesRegex "Function 'MyFuncBackward' returned nan values in its 0th output.")
Category: anomaly-nan

Reported symptom:
    RuntimeError: Function 'RowNormBackward' returned nan values in its 0th output.

Root cause:
    utils/ops.py, RowNorm.backward returns grad * x / norm, which is 0/0 = NaN for
    the zero-padded token rows; anomaly mode turns that NaN into an error.

Ground truth a good tool should report:
    utils/ops.py, the `return grad_out * x / norm` line of RowNorm.backward (guard
    the zero norm); raised at loss.backward() below.
"""
import torch

from model import NormScorer

torch.manual_seed(0)
torch.autograd.set_detect_anomaly(True)

model = NormScorer()
opt = torch.optim.SGD(model.parameters(), lr=0.05)
tokens = torch.randn(4, 7, 6)
tokens[:, 5:] = 0.0
target = torch.randn(4, 1)

for step in range(3):
    loss = (model(tokens) - target).pow(2).mean()
    opt.zero_grad()
    loss.backward()  # <- ERROR
    opt.step()
    print(f"step {step} loss {loss.item():.4f}")
