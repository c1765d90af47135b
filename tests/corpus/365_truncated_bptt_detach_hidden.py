"""Case 365 - correct: truncated BPTT, the LSTM state is detached between chunks

Source: https://github.com/pytorch/examples/blob/main/word_language_model/main.py
        (`repackage_hidden`: "Wraps hidden states in new Tensors, to detach
        them from their history"), discussed in
        https://github.com/LiyuanLucasLiu/LD-Net/issues/6
Category: correct code a naive tool flags (.detach() of a state that carries a graph)

What the code does:
    A long token stream is split into chunks of 10 steps; the LSTM state is
    carried from chunk to chunk (so the model sees long context) but detached
    before each chunk, so every backward covers only the current chunk and
    the previous graph can be freed.  All parameters get gradients every
    chunk.

Why a naive tool might flag it:
    `.detach()` on a tensor produced by the model's own parameters, feeding
    the next forward: it looks like a graph cut in the middle of the model.

Ground truth a good tool should report:
    Nothing: the cut is the truncation, it is intended.
    EXPECT: no findings

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        epoch 0 mean chunk loss 1.4166
        epoch 1 mean chunk loss 0.5079
        epoch 2 mean chunk loss 0.3844
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
VOCAB = 10


class CharLSTM(nn.Module):
    def __init__(self, dim=24):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, dim)
        self.lstm = nn.LSTM(dim, dim, batch_first=True)
        self.out = nn.Linear(dim, VOCAB)

    def forward(self, tokens, state):
        y, state = self.lstm(self.emb(tokens), state)
        return self.out(y), state


# a periodic stream with noise: predictable only with context
pattern = torch.tensor([1, 4, 1, 5, 9, 2, 6])
stream = pattern.repeat(4, 30)[:, :200]
stream = torch.where(torch.rand(stream.shape) < 0.05, torch.randint(0, VOCAB, stream.shape), stream)

model = CharLSTM()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
bptt = 10
for epoch in range(3):
    state = None
    total, n = 0.0, 0
    for start in range(0, stream.shape[1] - 1, bptt):
        chunk = stream[:, start:start + bptt + 1]
        if state is not None:
            state = tuple(s.detach() for s in state)
        optimizer.zero_grad()
        logits, state = model(chunk[:, :-1], state)
        loss = F.cross_entropy(logits.reshape(-1, VOCAB), chunk[:, 1:].reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        total, n = total + loss.item(), n + 1
    print(f"epoch {epoch} mean chunk loss {total / n:.4f}")
