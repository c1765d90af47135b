"""Case 656 - torch.utils.checkpoint called without an explicit use_reentrant

Source: pytorch/pytorch test/test_autograd.py, test_checkpoint_warns_if_use_reentrant_not_passed_explcitly (assertWarnsOnceRegex "the use_reentrant parameter should be passed explicitly")
Category: checkpoint

Reported symptom:
    UserWarning: torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting in PyTorch 2.9, calling checkpoint without use_reentrant will raise an exception. use_reentrant=False is recommended, but if you need to preserve the current default behavior, you can pass use_reentrant=True. Refer to docs for more details on the differences between the two variants.

Root cause:
    The transformer-style blocks are checkpointed with checkpoint(layer, h) and no
    use_reentrant argument. The implicit default (the legacy reentrant variant) is
    deprecated: torch warns and announces that omitting it will become an error.

Ground truth a good tool should report:
    The checkpoint(layer, h) call: pass use_reentrant=False explicitly.
"""
import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)

layers = nn.ModuleList([nn.Sequential(nn.LayerNorm(16), nn.Linear(16, 16), nn.GELU()) for _ in range(3)])
head = nn.Linear(16, 1)
opt = torch.optim.Adam([*layers.parameters(), *head.parameters()], lr=1e-3)
x = torch.randn(8, 16, requires_grad=True)
y = torch.randn(8, 1)

for step in range(2):
    h = x
    for layer in layers:
        h = h + checkpoint(layer, h)  # <- CAUSE,ERROR
    loss = nn.functional.mse_loss(head(h), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.4f}")
