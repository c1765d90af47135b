"""Case 931 - a learnable position table initialised with a sinusoid, next to a fixed one (correct)

Source: https://github.com/jadore801120/attention-is-all-you-need-pytorch/issues/33
        ("I was considering to keep the flexibility to extend to trainable positional
        encoding") and https://github.com/weihaosky/mogents/issues/11
        ("trainable PE provides more flexibility and sometimes performs better")
Category: correct (invariant 4)
EXPECT: no findings

Reported symptom:
    None. The decoder's positional table is meant to be fine-tuned from a sinusoidal
    start, and says so with requires_grad=True; the encoder's table is fixed and
    is a buffer. The time-step embedding uses random Fourier features trained on
    purpose.

Root cause:
    None. The optimizer changes exactly the tables the code declares trainable.

Ground truth a good tool should report:
    Nothing.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def sinusoid_table(n_position, d_hid):
    position = torch.arange(n_position, dtype=torch.float32)[:, None]
    div = torch.exp(torch.arange(0, d_hid, 2, dtype=torch.float32) * (-math.log(10000.0) / d_hid))
    table = torch.zeros(n_position, d_hid)
    table[:, 0::2] = torch.sin(position * div)
    table[:, 1::2] = torch.cos(position * div)
    return table


class Seq2Seq(nn.Module):
    def __init__(self, vocab=16, d=16, max_len=32):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.register_buffer("enc_pos", sinusoid_table(max_len, d))
        self.dec_pos = nn.Parameter(sinusoid_table(max_len, d), requires_grad=True)
        self.fourier = nn.Parameter(torch.sin(torch.arange(d)[None, :] * torch.randn(1, d)))
        self.mix = nn.Linear(2 * d, d)
        self.out = nn.Linear(d, vocab)

    def forward(self, src, tgt):
        enc = (self.embed(src) + self.enc_pos[: src.shape[1]]).mean(1, keepdim=True)
        dec = self.embed(tgt) + self.dec_pos[: tgt.shape[1]] + self.fourier
        return self.out(self.mix(torch.cat([dec, enc.expand_as(dec)], -1)))


src = torch.randint(0, 16, (64, 10))
tgt = src.flip(1)
model = Seq2Seq()
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)

for step in range(20):
    idx = torch.randint(0, 64, (16,))
    logits = model(src[idx], tgt[idx])
    loss = F.cross_entropy(logits.reshape(-1, 16), tgt[idx].reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

print(f"loss {loss.item():.4f}")
