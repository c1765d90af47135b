"""Case 161 - stacked LSTM cells kept in a plain Python list are never optimised

Source: https://github.com/ikostrikov/pytorch-meta-optimizer/issues/11
        "LSTM weights not optimised" (the LayerNormLSTMCell modules appended to
        `self.lstms = []` are not registered; fix: nn.Sequential/ModuleList);
        same mechanism: https://github.com/pytorch/pytorch/issues/715
Category: registration (submodules in a plain list)

Reported symptom:
    No error.  The model trains "fine" and the loss moves a little (the
    read-out layer learns), but the recurrent cells are never updated; they
    do not appear in `model.parameters()` / `print(model)` / `state_dict()`.

Root cause:
    `self.cells = []` is a plain list, which nn.Module.__setattr__ does not
    inspect, so the nn.LSTMCell objects appended to it are not submodules.
    Their weights still require grad and do receive .grad on every backward
    (the forward uses them), but the optimizer was built from
    `model.parameters()`, which does not contain them: they are never stepped,
    and `optimizer.zero_grad()` never clears them, so their .grad only grows.

Ground truth a good tool should report:
    Tensors `cells[0].weight_ih`, `cells[0].weight_hh`, `cells[0].bias_ih`,
    `cells[0].bias_hh` (and the same for cells[1]) get gradients in backward
    but belong to no optimizer and are not parameters of the model: the plain
    list created at line 48 hides them.  Use nn.ModuleList.
    EXPECT: kind=unregistered_submodule; container=cells; cause_line=48

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        tensors in model.parameters(): 2 (read-out only); LSTM tensors outside it: 8
        loss step 0: 0.4447  loss step 59: 0.4184
        cells[0].weight_ih changed after 60 steps: False
        cells[0].weight_ih.grad norm after step 1: 0.0198, after step 60: 3.0721
        readout.weight changed after 60 steps: True
"""
import torch
import torch.nn as nn

torch.manual_seed(0)


class StackedCellRegressor(nn.Module):
    def __init__(self, n_in, hidden, depth):
        super().__init__()
        self.hidden = hidden
        self.cells = []  # <- CAUSE: plain list, the cells are not registered submodules
        for d in range(depth):
            self.cells.append(nn.LSTMCell(n_in if d == 0 else hidden, hidden))
        self.readout = nn.Linear(hidden, 1)

    def forward(self, seq):
        batch = seq.shape[1]
        states = [(seq.new_zeros(batch, self.hidden), seq.new_zeros(batch, self.hidden))
                  for _ in self.cells]
        for x_t in seq:
            inp = x_t
            for i, cell in enumerate(self.cells):
                states[i] = cell(inp, states[i])
                inp = states[i][0]
        return self.readout(inp)


model = StackedCellRegressor(n_in=3, hidden=6, depth=2)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
seq = torch.randn(5, 16, 3)           # (time, batch, features)
target = seq.sum(dim=(0, 2)).unsqueeze(1) * 0.2

n_registered = len(list(model.parameters()))
n_hidden = sum(len(list(c.parameters())) for c in model.cells)
print(f"tensors in model.parameters(): {n_registered} (read-out only); "
      f"LSTM tensors outside it: {n_hidden}")

w_ih_before = model.cells[0].weight_ih.detach().clone()
readout_before = model.readout.weight.detach().clone()
grad_norms = []
for step in range(60):
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(seq), target)
    loss.backward()
    optimizer.step()
    grad_norms.append(model.cells[0].weight_ih.grad.norm().item())
    if step in (0, 59):
        print(f"loss step {step}: {loss.item():.4f}", end="  " if step == 0 else "\n")

print("cells[0].weight_ih changed after 60 steps:",
      not torch.equal(w_ih_before, model.cells[0].weight_ih.detach()))
print(f"cells[0].weight_ih.grad norm after step 1: {grad_norms[0]:.4f}, "
      f"after step 60: {grad_norms[-1]:.4f}")
print("readout.weight changed after 60 steps:",
      not torch.equal(readout_before, model.readout.weight.detach()))
