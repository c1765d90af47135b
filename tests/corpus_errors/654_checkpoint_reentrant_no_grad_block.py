"""Case 654 - reentrant checkpoint around a frozen block that runs under no_grad

Source: pytorch/pytorch test/test_autograd.py, test_checkpointing_without_reentrant_detached_tensor (assertRaisesRegex "none of output has requires_grad=True")
Category: checkpoint

Reported symptom:
    RuntimeError: none of output has requires_grad=True, this checkpoint() is not necessary

Root cause:
    The frozen feature extractor computes its output under torch.no_grad(), and it
    is wrapped in checkpoint(..., use_reentrant=True) like the trainable blocks. The
    reentrant checkpoint's output therefore requires no grad; when the loss (which
    does require grad through the adapter) is backpropagated, the checkpoint node
    finds no output to differentiate and raises.

Ground truth a good tool should report:
    The checkpoint(...) call on the frozen extractor: call the extractor directly (a
    no_grad block needs no checkpoint), or switch to use_reentrant=False. Raised at
    loss.backward().
"""
import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)


class FrozenExtractor(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(10, 10), nn.ReLU(), nn.Linear(10, 10))

    def forward(self, x):
        with torch.no_grad():
            return self.net(x)


extractor = FrozenExtractor()
adapter = nn.Linear(10, 10)
head = nn.Linear(10, 2)
opt = torch.optim.Adam([*adapter.parameters(), *head.parameters()], lr=1e-3)

x = torch.randn(6, 10, requires_grad=True)
y = torch.randint(0, 2, (6,))
for step in range(2):
    feats = checkpoint(extractor, x, use_reentrant=True)  # <- CAUSE
    feats = feats + adapter(x)
    loss = nn.functional.cross_entropy(head(feats), y)
    opt.zero_grad()
    loss.backward()  # <- ERROR
    opt.step()
    print(f"step {step} loss {loss.item():.3f}")
