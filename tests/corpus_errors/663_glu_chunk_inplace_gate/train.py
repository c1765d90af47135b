"""Case 663 - gated linear unit gates one chunk of its projection in place

Source: pytorch/pytorch test/test_autograd.py, test_inplace_view_multi_output_safe (split/chunk outputs modified in place)
Category: views + in-place

Reported symptom:
    RuntimeError: Output 0 of Split is a view and is being modified inplace. This view is the output of a function that returns multiple views. Such functions do not allow the output views to be modified inplace. You should replace the inplace operation by an out-of-place one.

Root cause:
    GatedFeedForward (layers.py) splits its projection with `chunk` and gates
    the value half with an in-place `mul_`; outputs of multi-view functions
    may not be modified in place.

Ground truth a good tool should report:
    The `value.mul_(torch.sigmoid(gate))` line in layers.py.
"""
import torch
import torch.nn as nn

from model import TinyTransformer

torch.manual_seed(0)

model = TinyTransformer()
opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
tokens = torch.randint(0, 32, (4, 10))

for step in range(3):
    opt.zero_grad()
    logits = model(tokens[:, :-1])
    loss = nn.functional.cross_entropy(logits.reshape(-1, 32), tokens[:, 1:].reshape(-1))
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.3f}")
