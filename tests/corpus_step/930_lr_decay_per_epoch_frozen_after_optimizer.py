"""Case 930 - learning rate multiplied once per epoch by hand, encoder frozen mid-run (correct)

Source: https://github.com/amoudgl/pygoturn/issues/16 (the fix: the decay call moved
        out of the batch loop, once per iteration) and
        https://github.com/facebookresearch/moco/issues/14
        ("torch.optim.SGD does not apply weight decay to parameters that do not have gradients")
Category: correct (invariant 4)
EXPECT: no findings

Reported symptom:
    None. The learning rate is multiplied by 0.5 after every epoch (a compounding
    write, but once per epoch as meant), and after the second epoch the encoder is
    frozen with requires_grad_(False) while AdamW with weight decay still holds it.

Root cause:
    None. zero_grad() sets gradients to None (its default), so the frozen encoder
    has .grad None at every later step and AdamW skips it, weight decay included;
    the per-epoch factor leaves the rate at 0.5**4 of its start, far from zero.

Ground truth a good tool should report:
    Nothing.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

encoder = nn.Sequential(nn.Linear(8, 32), nn.ReLU())
head = nn.Linear(32, 3)
model = nn.Sequential(encoder, head)
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.05)

x = torch.randn(256, 8)
y = (x[:, :3] + 0.1 * torch.randn(256, 3)).argmax(1)

for epoch in range(4):
    if epoch == 2:
        encoder.requires_grad_(False)
        frozen = encoder[0].weight.detach().clone()
    for batch in range(8):
        idx = torch.randint(0, 256, (32,))
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x[idx]), y[idx])
        loss.backward()
        optimizer.step()
    for group in optimizer.param_groups:
        group["lr"] *= 0.5

print(f"encoder moved after freezing: {(encoder[0].weight - frozen).abs().max().item():.2e}")
print(f"lr {optimizer.param_groups[0]['lr']:.1e}, loss {loss.item():.4f}")
