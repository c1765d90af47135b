"""Case 151 - attention mask applied with out-of-place masked_fill whose result is dropped

Source: https://github.com/opendilab/DI-engine/issues/333 "Is it a bug about transformer
        mask?" (ding/torch_utils/network/transformer.py: "I suppose it was meant to be
        an in place func here, masked_fill_() to be exact, otherwise maybe it wouldn't
        work"; maintainer: "It is indeed a mistake"); same bug fixed in
        https://github.com/facebookresearch/ParlAI/pull/3068 "Fix masked_fill no-op"
        and https://github.com/espnet/espnet/pull/1273
Category: work that is thrown away (out-of-place op used as a statement)

Reported symptom:
    No error.  Padded positions are attended to: the encoder output of a sequence
    depends on what is stored in its padding, and the padding embeddings receive
    gradient.

Root cause:
    `scores.masked_fill(pad_mask, float("-inf"))` returns a new tensor; written as a
    statement, its result is discarded and `scores` keeps finite logits at padded
    keys, so softmax gives them weight.  `scores = scores.masked_fill(...)` (or
    masked_fill_) was meant.

Ground truth a good tool should report:
    The output of `masked_fill` at line 53 is never used (out-of-place op as a bare
    statement); `scores` is read unmasked by the softmax at line 54.
    EXPECT: kind=discarded_out_of_place; cause_line=53; read_line=54

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        attention mass on padded keys (sequence 1): 0.5584
        output of real tokens changes with pad content: True (max diff 0.2892)
        gradient reaching the padding embedding row: 1.45
"""
import math

import torch
import torch.nn as nn

torch.manual_seed(0)
PAD = 0


class MaskedSelfAttention(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.last_weights = None

    def forward(self, x, pad_mask):  # pad_mask: (batch, keys) True at padding
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        scores = q @ k.transpose(1, 2) / math.sqrt(x.shape[-1])
        scores.masked_fill(pad_mask[:, None, :], float("-inf"))  # <- CAUSE: result discarded; scores stay unmasked
        weights = scores.softmax(dim=-1)  # <- READ
        self.last_weights = weights
        return self.proj(weights @ v)


class Encoder(nn.Module):
    def __init__(self, vocab=30, d=16):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.attn = MaskedSelfAttention(d)

    def forward(self, tokens):
        return self.attn(self.emb(tokens), tokens == PAD)


enc = Encoder()
tokens = torch.tensor([[5, 9, 3, 7, 2, 8], [4, 6, 11, PAD, PAD, PAD]])
out = enc(tokens)
pad_mass = enc.attn.last_weights[1, :3, 3:].sum(-1).mean()
print(f"attention mass on padded keys (sequence 1): {pad_mass.item():.4f}")

# same sentence, but the padding slots hold other (ignored) token ids at the embedding level
with torch.no_grad():
    emb_rows = enc.emb(tokens).clone()
    emb_rows[1, 3:] = enc.emb(torch.tensor([13, 14, 15]))
    other = enc.attn(emb_rows, tokens == PAD)
diff = (other[1, :3] - out[1, :3]).abs().max()
print(f"output of real tokens changes with pad content: {diff.item() > 1e-6} (max diff {diff.item():.4g})")

out[1, :3].sum().backward()
print(f"gradient reaching the padding embedding row: {enc.emb.weight.grad[PAD].norm().item():.4g}")
