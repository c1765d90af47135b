"""A GRU encoder-decoder on padded batches (pack_padded_sequence), teacher forcing,
padding ignored in the loss, gradient clipping (correct)."""

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

torch.manual_seed(0)
vocab, hidden = 20, 32
emb = nn.Embedding(vocab, hidden, padding_idx=0)
encoder = nn.GRU(hidden, hidden, batch_first=True)
decoder = nn.GRU(hidden, hidden, batch_first=True)
out = nn.Linear(hidden, vocab)
params = [*emb.parameters(), *encoder.parameters(), *decoder.parameters(), *out.parameters()]
opt = torch.optim.Adam(params, lr=1e-3)
for step in range(4):
    lengths = torch.tensor([7, 5, 3, 2])
    src = torch.randint(1, vocab, (4, 7))
    for i, n in enumerate(lengths):
        src[i, n:] = 0
    tgt = torch.randint(1, vocab, (4, 6))
    packed = pack_padded_sequence(emb(src), lengths, batch_first=True, enforce_sorted=True)
    enc_out, h = encoder(packed)
    enc_out, _ = pad_packed_sequence(enc_out, batch_first=True)
    dec_in = torch.cat([torch.ones(4, 1, dtype=torch.long), tgt[:, :-1]], dim=1)
    dec_out, _ = decoder(emb(dec_in), h)
    logits = out(dec_out)
    loss = nn.functional.cross_entropy(logits.reshape(-1, vocab), tgt.reshape(-1), ignore_index=0)
    opt.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(params, 1.0)
    opt.step()
print(float(loss))
