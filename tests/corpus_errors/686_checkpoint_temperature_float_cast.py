"""Case 686 - checkpointed frozen block whose only trainable input is used through float()

Source: pytorch/pytorch test/test_utils.py, TestCheckpoint.test_checkpoint_partial_grad (assertRaisesRegex 'none of output has requires_grad=True, this checkpoint() is not necessary')
Category: activation checkpointing (reentrant)

Reported symptom:
    RuntimeError: none of output has requires_grad=True, this checkpoint() is not necessary

Root cause:
    A frozen encoder block is checkpointed together with a learnable softmax
    temperature. Inside the block the temperature is turned into a Python
    number with float(), so during the backward recomputation nothing in the
    output depends on a tensor that requires grad. The reentrant checkpoint
    output still claimed requires_grad (because `temperature` did), and on
    backward it finds no differentiable output to backpropagate into.

Ground truth a good tool should report:
    `float(temperature)` inside attn_block (CAUSE) detaches the only trainable
    input of the checkpointed function; keep it a tensor. Raised in
    loss.backward() (ERROR).
"""
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)

frozen_q = nn.Linear(16, 16).requires_grad_(False)
frozen_k = nn.Linear(16, 16).requires_grad_(False)
temperature = nn.Parameter(torch.tensor(1.0))
head = nn.Linear(16, 3)


def attn_block(h, temperature):
    scores = frozen_q(h) @ frozen_k(h).transpose(-2, -1)
    attn = torch.softmax(scores / float(temperature), dim=-1)  # <- CAUSE
    return attn @ h


opt = torch.optim.Adam([temperature, *head.parameters()], lr=1e-2)
tokens = torch.randn(4, 5, 16)
labels = torch.randint(0, 3, (4,))

opt.zero_grad()
ctx = checkpoint(attn_block, tokens, temperature, use_reentrant=True)
loss = nn.functional.cross_entropy(head(ctx.mean(1)), labels)
loss.backward()  # <- ERROR
opt.step()
print("temperature", temperature.item())
