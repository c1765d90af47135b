"""Case 911 - language model with tied input/output embeddings (correct)

Source: https://github.com/pytorch/pytorch/issues/62264
        "the problem is that your model's `decoder.in_embed.weight` and `decoder.out_embed.weight` reference the same Parameter"
Category: correct (invariant 6)
EXPECT: no findings

Reported symptom:
    None. The output projection shares its weight with the token embedding.

Root cause:
    None. The tie is made once in __init__ by assigning the same Parameter; the
    checkpoint is loaded with the default copy mode (which preserves aliasing)
    before the optimizer is built, so the shared parameter appears once in
    parameters() and receives the sum of both gradients.

Ground truth a good tool should report:
    Nothing. One parameter used at two places is the intended weight tying.
"""
import copy

import torch
import torch.nn.functional as F

from checkpoint import load_pretrained
from model import TinyLM

torch.manual_seed(0)

pretrained_state = copy.deepcopy(TinyLM().state_dict())
model = load_pretrained(TinyLM(), pretrained_state)
optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)

tokens = (torch.randint(0, 24, (64, 1)) + torch.arange(10) * torch.randint(1, 3, (64, 1))) % 24
inputs, targets = tokens[:, :-1], tokens[:, 1:]

for step in range(30):
    idx = torch.randint(0, 64, (16,))
    loss = F.cross_entropy(model(inputs[idx]).reshape(-1, 24), targets[idx].reshape(-1))
    if step == 0:
        first = loss.item()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

assert model.embed.weight is model.lm_head.weight
print(f"loss {first:.4f} -> {loss.item():.4f}")
