"""Case 166 - ConvLSTM peephole weights created as tensors with requires_grad=True, not nn.Parameter

Source: https://github.com/automan000/Convolutional_LSTM_PyTorch/issues/17
        "Why Wci, Wcf, Wco are Variables rather than nn.Parameters" (the
        maintainer: "if you declare an optimizer like Adam(model.parameters()),
        parameters will not be updated forever"); same class of bug:
        https://github.com/SimonThomine/RememberingNormality/issues/7
Category: registration (tensor attribute instead of nn.Parameter)

Reported symptom:
    No error.  The peephole weights stay at their initial value for the whole
    training run and are missing from `state_dict()` (so a reloaded model
    silently uses fresh zeros).

Root cause:
    `self.Wci = torch.zeros(..., requires_grad=True)` stores a plain tensor
    attribute.  It takes part in the graph and gets a .grad on every backward,
    but nn.Module registers only nn.Parameter (and buffers), so the tensor is
    not in `model.parameters()`: the optimizer never steps it, and
    `optimizer.zero_grad()` never clears its .grad, which keeps growing.

Ground truth a good tool should report:
    Leaf tensors `Wci`, `Wcf`, `Wco` of the ConvLSTM cell (created at
    lines 50-52) receive gradients but are in no optimizer and not in
    `model.parameters()`; wrap them in nn.Parameter.
    EXPECT: kind=unregistered_leaf; tensors=Wci,Wcf,Wco; cause_line=50,51,52

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        step  0 loss 0.9003  |Wci.grad| 0.0008
        step 24 loss 0.0815  |Wci.grad| 0.0263
        registered parameters: ['cell.gates.weight', 'cell.gates.bias', 'out.weight',
          'out.bias']
        Wci in state_dict: False
        Wci still all zeros after training: True
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ConvLSTMCell(nn.Module):
    def __init__(self, in_ch, hid_ch, size):
        super().__init__()
        self.hid_ch = hid_ch
        self.gates = nn.Conv2d(in_ch + hid_ch, 4 * hid_ch, 3, padding=1)
        self.Wci = torch.zeros(1, hid_ch, size, size, requires_grad=True)  # <- CAUSE: not an nn.Parameter
        self.Wcf = torch.zeros(1, hid_ch, size, size, requires_grad=True)  # <- CAUSE: not an nn.Parameter
        self.Wco = torch.zeros(1, hid_ch, size, size, requires_grad=True)  # <- CAUSE: not an nn.Parameter

    def forward(self, x, state):
        h, c = state
        i, f, g, o = self.gates(torch.cat([x, h], dim=1)).chunk(4, dim=1)
        i = torch.sigmoid(i + c * self.Wci)
        f = torch.sigmoid(f + c * self.Wcf)
        c = f * c + i * torch.tanh(g)
        o = torch.sigmoid(o + c * self.Wco)
        return o * torch.tanh(c), c


class NextFramePredictor(nn.Module):
    def __init__(self, size=6):
        super().__init__()
        self.cell = ConvLSTMCell(1, 4, size)
        self.out = nn.Conv2d(4, 1, 1)

    def forward(self, frames):
        b, t, _, hgt, wid = frames.shape
        h = frames.new_zeros(b, self.cell.hid_ch, hgt, wid)
        c = torch.zeros_like(h)
        for k in range(t):
            h, c = self.cell(frames[:, k], (h, c))
        return self.out(h)


model = NextFramePredictor()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
frames = torch.rand(8, 4, 1, 6, 6)
target = frames[:, -1].roll(1, dims=-1)

for step in range(25):
    optimizer.zero_grad()
    loss = F.mse_loss(model(frames), target)
    loss.backward()
    optimizer.step()
    if step in (0, 24):
        print(f"step {step:2d} loss {loss.item():.4f}  |Wci.grad| {model.cell.Wci.grad.norm():.4f}")

names = [n for n, _ in model.named_parameters()]
print("registered parameters:", names)
print("Wci in state_dict:", any("Wci" in k for k in model.state_dict()))
print("Wci still all zeros after training:", bool((model.cell.Wci == 0).all()))
