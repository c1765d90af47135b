"""Case 111 - self-attention over a batch with an empty sequence: all keys -inf -> softmax NaN

Source: https://github.com/pytorch/pytorch/issues/24816
        "Transformer Encoder Layer with src_key_padding makes NaN" ("If I have all padded
        sequence with padding mask, this makes NaN output. and backward() of this makes
        every NaN of outputs for next step of iterations.")
Category: nan-in-forward

Reported symptom:
    Review classifier with hand-written attention: loss nan as soon as the batch contains
    an empty review; all attention weights get NaN gradients.

Root cause:
    The key padding mask is built from the sequence lengths; review 2 has length 0 after
    cleaning, so its mask row is all True and masked_fill writes -inf into every score of
    that sample.  softmax of an all -inf row subtracts its max: -inf - (-inf) = NaN.  The
    NaN attention output survives the pooling (NaN * 0 = NaN), so the loss and every
    gradient are NaN.

Ground truth a good tool should report:
    First non-finite value in forward: the -inf written by masked_fill at line 55 (all
    keys of sample 2, mask from line 68); first NaN: softmax at line 56; it reaches the
    loss and model.qkv.weight.grad.  Fix: drop empty sequences, or fill with a large finite
    negative / zero the rows whose mask is all True.
    EXPECT: kind=nan_forward; first_inf_line=55; first_nan_line=56; nan_op=softmax;
            cause_line=55; created_line=68; affected=qkv.weight.grad

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        loss = nan
        qkv.weight.grad has NaN: True
"""
import math

import torch
import torch.nn as nn

torch.manual_seed(0)
vocab, d = 50, 16


class ReviewEncoder(nn.Module):
    """Single-head self-attention over the tokens of a review, then mean-pool the valid tokens."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(vocab, d, padding_idx=0)
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, 2)

    def forward(self, tokens, pad):  # pad: (B, L) True where the position is padding
        q, k, v = self.qkv(self.emb(tokens)).chunk(3, dim=-1)
        scores = q @ k.transpose(1, 2) / math.sqrt(d)
        scores = scores.masked_fill(pad[:, None, :], float("-inf"))  # <- CAUSE,INF: a review with no tokens has every key masked
        attn = scores.softmax(dim=-1)  # <- NAN: softmax of a row that is all -inf = nan
        h = attn @ v
        keep = (~pad).float().unsqueeze(-1)
        return self.out((h * keep).sum(1) / keep.sum(1).clamp(min=1.0))


reviews = [[5, 9, 13, 2], [7, 7, 21], [], [33, 4, 18, 11, 6]]  # review 2 was empty after cleaning
lengths = torch.tensor([len(r) for r in reviews])
L = int(lengths.max())
tokens = torch.zeros(len(reviews), L, dtype=torch.long)
for i, r in enumerate(reviews):
    tokens[i, : len(r)] = torch.tensor(r, dtype=torch.long)
pad = torch.arange(L)[None, :] >= lengths[:, None]  # <- CREATED: row 2 is all True (length 0)
labels = torch.tensor([1, 0, 1, 0])

model = ReviewEncoder()
loss = nn.functional.cross_entropy(model(tokens, pad), labels)
print("loss =", loss.item())
loss.backward()
print("qkv.weight.grad has NaN:", torch.isnan(model.qkv.weight.grad).any().item())
