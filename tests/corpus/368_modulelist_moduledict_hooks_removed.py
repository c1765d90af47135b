"""Case 368 - correct: nn.ModuleList / nn.ModuleDict model, logging hooks registered once and removed

Source: https://github.com/pytorch/pytorch/issues/5037 ("Removing hooks from
        module": `handle = model.register_forward_hook(...); handle.remove()`)
        and https://github.com/pytorch/pytorch/issues/715 (use nn.ModuleList
        so that submodules in a list are registered)
Category: correct code a naive tool flags (containers, forward/backward hooks)

What the code does:
    Residual blocks live in an nn.ModuleList and two task heads in an
    nn.ModuleDict, so every submodule is registered, moved and optimised.
    Before training, a forward hook (activation RMS, read with .detach()) and
    a full backward hook (gradient RMS at each block's output, returns None)
    are registered ONCE per block; their handles are kept and removed after
    the warm-up epochs.  The hooks only observe; they never change a value.

Why a naive tool might flag it:
    Module hooks on every block, a backward hook that reads grad_output,
    containers iterated in forward, and hooks that stop firing mid-training.

Ground truth a good tool should report:
    Nothing: registration is complete, the hooks are observers and are
    removed cleanly.
    EXPECT: no findings

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        epoch  0 loss 3.5127
        warm-up logged 9 activation and 9 gradient records
        epoch 11 loss 1.7340
        records after removal: 9 9
        parameter tensors registered: 18
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ResidualMLP(nn.Module):
    def __init__(self, n_in=8, width=16, depth=3):
        super().__init__()
        self.stem = nn.Linear(n_in, width)
        self.blocks = nn.ModuleList(
            nn.Sequential(nn.LayerNorm(width), nn.Linear(width, width), nn.GELU()) for _ in range(depth))
        self.heads = nn.ModuleDict({"price": nn.Linear(width, 1), "category": nn.Linear(width, 3)})

    def forward(self, x):
        h = self.stem(x)
        for block in self.blocks:
            h = h + block(h)
        return {name: head(h) for name, head in self.heads.items()}


model = ResidualMLP()
optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
x = torch.randn(64, 8)
price = x[:, :2].sum(1, keepdim=True)
category = (x[:, 2] > 0).long() + (x[:, 3] > 1).long()

act_log, grad_log, handles = [], [], []
for i, block in enumerate(model.blocks):
    handles.append(block.register_forward_hook(
        lambda mod, inp, out, i=i: act_log.append((i, out.detach().pow(2).mean().sqrt().item()))))
    handles.append(block.register_full_backward_hook(
        lambda mod, g_in, g_out, i=i: grad_log.append((i, g_out[0].pow(2).mean().sqrt().item()))))

for epoch in range(12):
    optimizer.zero_grad()
    out = model(x)
    loss = F.mse_loss(out["price"], price) + F.cross_entropy(out["category"], category)
    loss.backward()
    optimizer.step()
    if epoch == 2:
        for h in handles:
            h.remove()
        print(f"warm-up logged {len(act_log)} activation and {len(grad_log)} gradient records")
    if epoch in (0, 11):
        print(f"epoch {epoch:2d} loss {loss.item():.4f}")

print("records after removal:", len(act_log), len(grad_log))
print("parameter tensors registered:", len(list(model.parameters())))
