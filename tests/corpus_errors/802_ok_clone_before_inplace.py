"""Case 802 - in-place edits made only on clones of tensors autograd saved

Source: pytorch/pytorch test/test_autograd.py, test_inplace (the cases that must not raise) and test_detach_then_inplace_raises_in_autograd (fixed with clone())
Category: correct

Reported symptom:
    none: the script runs to completion without error or warning.

Root cause:
    No bug. The sigmoid gate is cloned before it is masked in-place, the residual is
    added out of place, and the monitoring copy is detach().clone()d before being
    centred in-place, so no tensor saved for backward (sigmoid/tanh outputs) is
    ever modified. An in-place add on a fresh intermediate that nothing saved is
    also fine.

Ground truth a good tool should report:
    Nothing.

EXPECT: no findings
"""
import torch
from torch import nn

torch.manual_seed(0)


class GatedResidual(nn.Module):
    def __init__(self, dim=12):
        super().__init__()
        self.gate = nn.Linear(dim, dim)
        self.value = nn.Linear(dim, dim)
        self.fc = nn.Linear(dim, dim)

    def forward(self, x, mask):
        gate = torch.sigmoid(self.gate(x)).clone()
        gate *= mask
        h = torch.tanh(self.fc(x))
        h = h + x
        out = gate * self.value(h)
        out += 1.0
        return out


model = GatedResidual()
head = nn.Linear(12, 1)
opt = torch.optim.Adam([*model.parameters(), *head.parameters()], lr=1e-3)
x, y = torch.randn(8, 12), torch.randn(8, 1)
mask = (torch.rand(8, 12) > 0.2).float()

for step in range(3):
    feats = model(x, mask)
    monitor = feats.detach().clone()
    monitor.sub_(monitor.mean(dim=0))
    loss = nn.functional.mse_loss(head(torch.tanh(feats)), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.4f} spread {monitor.abs().mean().item():.3f}")
