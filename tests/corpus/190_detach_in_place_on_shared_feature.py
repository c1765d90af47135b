"""Case 190 - detach_() used on a feature that the main loss also needs.

Source: a frequent discuss.pytorch.org report (paraphrased): "the encoder stopped learning
after I added an auxiliary loss".
Root cause: `feat.detach_()` detaches the tensor itself in place (not a copy): the main
loss computed after it no longer reaches the encoder. Use `feat.detach()` for the
auxiliary branch.
"""
import torch
from torch import nn

torch.manual_seed(0)
encoder = nn.Linear(8, 4)
main_head, aux_head = nn.Linear(4, 1), nn.Linear(4, 1)
params = [*encoder.parameters(), *main_head.parameters(), *aux_head.parameters()]
opt = torch.optim.Adam(params, lr=1e-3)
for step in range(3):
    x = torch.randn(16, 8)
    feat = encoder(x)
    aux = aux_head(feat.detach_()).pow(2).mean()  # <- CAUSE
    main = (main_head(feat) - 1).pow(2).mean()
    opt.zero_grad()
    (main + aux).backward()
    opt.step()
print(encoder.weight.grad)  # <- READ
