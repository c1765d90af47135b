"""Correct 302 - causal + key-padding attention with masked_fill(-inf); every row keeps a key

Category: correct (numerics: -inf attention masks)
What it is:
    A one-layer causal language model over a padded batch.  Future positions and padded
    keys are filled with float('-inf') before the softmax.  Every sequence has at least one
    token, and key 0 is never blocked (it is neither in the future nor padding), so each
    softmax row keeps at least one finite score and is well defined; padded targets are
    ignored with ignore_index=-100.
Why a naive tool might flag it:
    -inf values written into a tensor that requires grad, exact zeros out of the softmax,
    and rows for padded query positions; none of them produces a NaN or a wrong gradient.
Ground truth a good tool should report:
    EXPECT: no findings (correct training code: -inf masks with no fully-masked row)

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        step 0: loss 3.6990
        step 1: loss 3.5079
        step 2: loss 3.3225
        step 3: loss 3.1425
        step 4: loss 2.9679
        logits finite: True | grads finite: True
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
vocab, d, PAD = 40, 32, 0


class TinyCausalLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(vocab, d, padding_idx=PAD)
        self.pos = nn.Parameter(0.02 * torch.randn(16, d))
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab)

    def forward(self, tokens, lengths):
        B, L = tokens.shape
        x = self.emb(tokens) + self.pos[:L]
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        scores = q @ k.transpose(1, 2) / math.sqrt(d)
        future = torch.triu(torch.ones(L, L, dtype=torch.bool), diagonal=1)
        padded_key = torch.arange(L)[None, :] >= lengths[:, None]
        blocked = future[None] | padded_key[:, None, :]  # key 0 is never blocked: every length is >= 1
        scores = scores.masked_fill(blocked, float("-inf"))
        attn = scores.softmax(dim=-1)
        x = self.norm(x + self.proj(attn @ v))
        return self.head(x)


seqs = [[3, 8, 15, 4, 9, 2], [7, 1, 22], [5, 5, 30, 12], [18]]
lengths = torch.tensor([len(s) for s in seqs])
tokens = torch.full((len(seqs), int(lengths.max())), PAD)
for i, s in enumerate(seqs):
    tokens[i, : len(s)] = torch.tensor(s)
inputs, targets = tokens[:, :-1], tokens[:, 1:].clone()
targets[targets == PAD] = -100  # padded targets do not count

model = TinyCausalLM()
opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
for step in range(5):
    logits = model(inputs, lengths.clamp(max=inputs.shape[1]))
    loss = F.cross_entropy(logits.reshape(-1, vocab), targets.reshape(-1), ignore_index=-100)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step}: loss {loss.item():.4f}")
print("logits finite:", torch.isfinite(logits).all().item(),
      "| grads finite:", all(torch.isfinite(p.grad).all().item() for p in model.parameters()))
