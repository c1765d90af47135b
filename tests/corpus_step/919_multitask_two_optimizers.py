"""Case 919 - shared encoder with two optimizers over disjoint parameter sets (correct)

Source: https://github.com/eriklindernoren/Keras-GAN/issues/128
        "Generator and Discriminator should use individual optimizer."
Category: correct (invariant 3)
EXPECT: no findings

Reported symptom:
    None. A shared encoder and a regression head are optimised with Adam, a
    classification head with SGD (each with its own state); one backward on the
    summed loss feeds both.

Root cause:
    None. The two optimizers hold disjoint parameter sets that together cover the
    model; both are zeroed before the single backward and both step after it, so
    each step consumes exactly the gradients of the current batch.

Ground truth a good tool should report:
    Nothing.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

encoder = nn.Sequential(nn.Linear(10, 48), nn.ReLU())
reg_head = nn.Linear(48, 1)
cls_head = nn.Linear(48, 3)
opt_main = torch.optim.Adam([*encoder.parameters(), *reg_head.parameters()], lr=5e-3)
opt_cls = torch.optim.SGD(cls_head.parameters(), lr=0.1, momentum=0.9)

x = torch.randn(512, 10)
y_reg = x[:, :2].sum(1, keepdim=True)
y_cls = x[:, 2:5].argmax(1)

for step in range(30):
    idx = torch.randint(0, 512, (64,))
    h = encoder(x[idx])
    loss = F.mse_loss(reg_head(h), y_reg[idx]) + F.cross_entropy(cls_head(h), y_cls[idx])
    if step == 0:
        first = loss.item()
    opt_main.zero_grad()
    opt_cls.zero_grad()
    loss.backward()
    opt_main.step()
    opt_cls.step()

print(f"loss {first:.4f} -> {loss.item():.4f}")
