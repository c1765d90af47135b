"""Case 683 - tying decoder and encoder weights through a transpose

Source: pytorch/pytorch test/test_nn.py, TestNN parameter-assignment tests (setattr of a plain Tensor on a registered parameter name raises TypeError)
Category: nn.Module parameters

Reported symptom:
    TypeError: cannot assign 'torch.FloatTensor' as parameter 'weight' (torch.nn.Parameter or None expected)

Root cause:
    In a tied autoencoder the user writes
    `self.decoder.weight = self.encoder.weight.t()`. `weight` is a registered
    parameter of the decoder, and `.t()` produces a plain (non-leaf) Tensor, not
    an nn.Parameter; nn.Module refuses to store a non-Parameter under a
    parameter name.

Ground truth a good tool should report:
    The tying assignment (CAUSE/ERROR) puts a transposed Tensor where a
    Parameter is required; use F.linear(h, self.encoder.weight.t()) in forward
    or tie modules whose weights have the same shape.
"""
import torch
import torch.nn as nn

torch.manual_seed(0)


class TiedAutoencoder(nn.Module):
    def __init__(self, dim, code):
        super().__init__()
        self.encoder = nn.Linear(dim, code)
        self.decoder = nn.Linear(code, dim)
        self.decoder.weight = self.encoder.weight.t()  # <- CAUSE,ERROR

    def forward(self, x):
        return self.decoder(torch.relu(self.encoder(x)))


model = TiedAutoencoder(12, 4)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
x = torch.randn(32, 12)
for epoch in range(3):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(x), x)
    loss.backward()
    opt.step()
    print("epoch", epoch, loss.item())
