"""Case 525 - hidden layers kept in a plain Python list are invisible to parameters()

Source: https://github.com/pytorch/pytorch/issues/715
        "The parameters of `nn.Linear` in the for-loop are not included in `parameters`"
Category: 6 - structure (registration, sharing, replacement)

Reported symptom:
    print(model) shows only the classifier; the hidden layers built in a loop do
    not learn and the model underfits, yet no error is raised.

Root cause:
    SNLINet stores its hidden layers in `self.hids = []`. nn.Module only registers
    submodules assigned directly or held in nn.ModuleList / nn.ModuleDict, so the
    hidden layers are not part of model.parameters(); the optimizer never sees
    them although their weights receive gradients at every backward.

Ground truth a good tool should report:
    The Linear layers used in forward are not registered in the model, so their
    parameters are in no optimizer (gradients computed, never applied); they are
    held in a plain list created at the `self.hids = [...]` line.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SNLINet(nn.Module):
    def __init__(self, n_in=16, n_hid=32, n_layers=2, n_classes=3):
        super().__init__()
        self.inp = nn.Linear(n_in, n_hid)
        self.hids = [nn.Linear(n_hid, n_hid) for _ in range(n_layers)]  # <- CAUSE
        self.classifier = nn.Linear(n_hid, n_classes)

    def forward(self, x):
        h = torch.tanh(self.inp(x))
        for layer in self.hids:
            h = torch.tanh(layer(h))
        return self.classifier(h)


x = torch.randn(384, 16)
y = (torch.sin(x[:, 0] * 2) + x[:, 1] * x[:, 2] > 0).long() + (x[:, 3] > 1).long()

model = SNLINet()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
print(model)

for step in range(30):
    idx = torch.randint(0, 384, (64,))
    loss = F.cross_entropy(model(x[idx]), y[idx])
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

print(f"final loss {loss.item():.4f}")
