"""Case 619 - stateful RNN language model carries the hidden state across batches without detaching

Source: pytorch/pytorch test/test_autograd.py, test_backward_twice_with_saved_values (assertRaisesRegex "Specify retain_graph=True")
Category: graph-freed

Reported symptom:
    RuntimeError: Trying to backward through the graph a second time (or directly access saved tensors after they have already been freed). Saved intermediate values of the graph are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if you need to access saved tensors after calling backward.

Root cause:
    The hidden state returned by the GRU for chunk k is fed as the initial state of
    chunk k+1 as is. It still carries the graph of chunk k, whose saved tensors were
    freed by the previous loss.backward(); the backward of chunk k+1 walks back into
    that freed graph. Truncated BPTT needs the carried state detached.

Ground truth a good tool should report:
    The `out, hidden = rnn(...)` line (the carried `hidden`) must be detached at
    chunk boundaries, e.g. rnn(emb(inp), hidden.detach()); retain_graph=True would
    be the wrong fix. The error is raised at loss.backward() on the second chunk.
"""
import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(0)

vocab, bptt = 40, 8
stream = torch.randint(0, vocab, (4, 5 * bptt + 1))
emb = nn.Embedding(vocab, 16)
rnn = nn.GRU(16, 32, batch_first=True)
decoder = nn.Linear(32, vocab)
params = [*emb.parameters(), *rnn.parameters(), *decoder.parameters()]
opt = torch.optim.Adam(params, lr=1e-3)

hidden = torch.zeros(1, 4, 32)
for i in range(0, 5 * bptt, bptt):
    inp = stream[:, i:i + bptt]
    target = stream[:, i + 1:i + 1 + bptt]
    out, hidden = rnn(emb(inp), hidden)  # <- CAUSE: hidden keeps the previous chunk's graph
    loss = F.cross_entropy(decoder(out).reshape(-1, vocab), target.reshape(-1))
    opt.zero_grad()
    loss.backward()  # <- ERROR
    opt.step()
    print(f"chunk {i // bptt} loss {loss.item():.3f}")
