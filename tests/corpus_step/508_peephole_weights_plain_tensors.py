"""Case 508 - LSTM peephole weights created as plain tensors with requires_grad=True

Source: https://github.com/automan000/Convolutional_LSTM_PyTorch/issues/17
        "parameters will not be updated forever."
Category: 2 - every gradient backward produces is consumed

Reported symptom:
    The peephole weights Wci, Wcf, Wco of the ConvLSTM cell never change during
    training; they are also missing from the saved state_dict.

Root cause:
    The peephole weights are plain tensors created with requires_grad=True (the
    old Variable idiom) instead of nn.Parameter. Autograd computes and
    accumulates their .grad at every backward, but they are not registered, so
    model.parameters() - and therefore the optimizer - never sees them.

Ground truth a good tool should report:
    Three leaf tensors used in the forward pass receive gradients that no
    optimizer consumes (and that grow across steps because nothing zeroes them);
    they are created as unregistered tensors in PeepholeLSTMCell.__init__ (the
    `self.Wci, self.Wcf, self.Wco = ...` line).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class PeepholeLSTMCell(nn.Module):
    def __init__(self, d_in, hidden):
        super().__init__()
        self.hidden = hidden
        self.gates = nn.Linear(d_in + hidden, 4 * hidden)
        self.Wci, self.Wcf, self.Wco = (torch.zeros(hidden, requires_grad=True) for _ in range(3))  # <- CAUSE

    def forward(self, x, state):
        h, c = state
        i, f, g, o = self.gates(torch.cat([x, h], 1)).chunk(4, 1)
        i = torch.sigmoid(i + self.Wci * c)
        f = torch.sigmoid(f + self.Wcf * c)
        c = f * c + i * torch.tanh(g)
        o = torch.sigmoid(o + self.Wco * c)
        return o * torch.tanh(c), c


class Forecaster(nn.Module):
    def __init__(self, d_in=3, hidden=16):
        super().__init__()
        self.cell = PeepholeLSTMCell(d_in, hidden)
        self.out = nn.Linear(hidden, 1)

    def forward(self, seq):
        h = seq.new_zeros(seq.shape[0], self.cell.hidden)
        c = torch.zeros_like(h)
        for t in range(seq.shape[1]):
            h, c = self.cell(seq[:, t], (h, c))
        return self.out(h).squeeze(-1)


seq = torch.randn(128, 10, 3)
target = seq[:, :, 0].cumsum(1)[:, -1] * 0.3

model = Forecaster()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)

for step in range(25):
    idx = torch.randint(0, 128, (32,))
    loss = F.mse_loss(model(seq[idx]), target[idx])
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

print(f"final loss {loss.item():.4f}  Wci still zero: {bool((model.cell.Wci == 0).all())}  "
      f"Wci.grad norm {model.cell.Wci.grad.norm().item():.4f}")
