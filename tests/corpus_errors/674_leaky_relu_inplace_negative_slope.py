"""Case 674 - in-place LeakyReLU configured with a negative slope

Source: pytorch/pytorch test/test_autograd.py, test_leaky_relu_inplace_with_neg_slope (assertRaisesRegex 'call out-of-place version')
Category: in-place activation

Reported symptom:
    RuntimeError: In-place leakyReLu backward calculation is triggered with a negative slope which is not supported. This is caused by calling in-place forward function with a negative slope, please call out-of-place version instead. File an issue at https://github.com/pytorch/pytorch if you do require supporting in-place leakRelu backward calculation with negative slope

Root cause:
    The activation is built as nn.LeakyReLU(negative_slope=-0.1, inplace=True).
    The in-place backward recovers the sign of the input from the saved
    output, which is impossible when the slope is negative (negative inputs map
    to positive outputs), so the backward refuses to run.

Ground truth a good tool should report:
    The LeakyReLU construction with a negative slope and inplace=True (CAUSE);
    use inplace=False (or a positive slope). Raised in loss.backward() (ERROR).
"""
import torch
import torch.nn as nn

torch.manual_seed(0)

model = nn.Sequential(
    nn.Linear(6, 12),
    nn.LeakyReLU(negative_slope=-0.1, inplace=True),  # <- CAUSE
    nn.Linear(12, 1),
)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
x, y = torch.randn(20, 6), torch.randn(20, 1)

for epoch in range(2):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()  # <- ERROR
    opt.step()
    print("epoch", epoch, loss.item())
