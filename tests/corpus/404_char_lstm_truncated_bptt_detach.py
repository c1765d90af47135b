"""Clean 404 - character LSTM language model trained with truncated BPTT: the (h, c)
state is carried across chunks and detached at every chunk boundary

What it does:
    A long token stream is cut into chunks of 16 steps.  The LSTM state returned by
    chunk k is the initial state of chunk k+1, after `tuple(s.detach() for s in
    state)`.  Each chunk does zero_grad, backward, clip_grad_norm_ and step; the state
    is reset to None at every epoch.

Why it is correct (not a bug):
    Carrying a hidden state between optimizer steps is the classic cause of "backward
    through the graph a second time" and of in-place version errors (cases-2/12), but
    here the carried tensors are detached, so each backward only reaches the graph of
    its own chunk; the values still flow forward.  The optimizer's in-place update of
    the LSTM weights happens after that chunk's backward, and the next chunk records a
    new graph with the new weights.
    EXPECT: no findings

Observed (torch 2.13, CPU):
    exit code: 0
    stdout:
        epoch 0: mean loss=3.2579 over 9 chunks
        epoch 1: mean loss=3.0633 over 9 chunks
        epoch 2: mean loss=2.8024 over 9 chunks
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
text = "the quick brown fox jumps over the lazy dog. " * 12
vocab = sorted(set(text))
stream = torch.tensor([vocab.index(ch) for ch in text])
BPTT, BATCH = 16, 4


class CharLM(nn.Module):
    def __init__(self, n_vocab, dim=32):
        super().__init__()
        self.emb = nn.Embedding(n_vocab, dim)
        self.lstm = nn.LSTM(dim, dim, batch_first=True)
        self.out = nn.Linear(dim, n_vocab)

    def forward(self, x, state=None):
        h, state = self.lstm(self.emb(x), state)
        return self.out(h), state


def batchify(data, bsz):
    n = data.size(0) // bsz
    return data[: n * bsz].view(bsz, n)  # each row is a contiguous stream


model = CharLM(len(vocab))
optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
data = batchify(stream, BATCH)

for epoch in range(3):
    state, total, n_chunks = None, 0.0, 0
    for i in range(0, data.size(1) - 1, BPTT):
        seq_len = min(BPTT, data.size(1) - 1 - i)
        x, y = data[:, i:i + seq_len], data[:, i + 1:i + 1 + seq_len]
        logits, state = model(x, state)
        state = tuple(s.detach() for s in state)  # truncate the history here
        loss = F.cross_entropy(logits.reshape(-1, len(vocab)), y.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        total, n_chunks = total + loss.item(), n_chunks + 1
    print(f"epoch {epoch}: mean loss={total / n_chunks:.4f} over {n_chunks} chunks")
