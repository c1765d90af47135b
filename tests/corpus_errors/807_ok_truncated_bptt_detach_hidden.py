"""Case 807 - truncated BPTT that detaches the carried hidden state

Source: pytorch/pytorch test/test_autograd.py, test_detach (out-of-place detach) as the fix of test_backward_twice_with_saved_values-style reuse
Category: correct

Reported symptom:
    none: the script runs to completion without error or warning.

Root cause:
    No bug. The GRU's final hidden state is carried to the next chunk through
    hidden.detach(), so each chunk's backward stops at the chunk boundary and never
    reaches a graph already freed by the previous backward. The LSTM's last step is
    detached out of place (`last.detach()`), not with detach_() on a view.

Ground truth a good tool should report:
    Nothing.

EXPECT: no findings
"""
import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(0)

vocab, bptt = 40, 8
stream = torch.randint(0, vocab, (4, 4 * bptt + 1))
emb = nn.Embedding(vocab, 16)
rnn = nn.GRU(16, 32, batch_first=True)
decoder = nn.Linear(32, vocab)
aux = nn.Linear(32, 1)
params = [*emb.parameters(), *rnn.parameters(), *decoder.parameters(), *aux.parameters()]
opt = torch.optim.Adam(params, lr=1e-3)

hidden = torch.zeros(1, 4, 32)
for i in range(0, 4 * bptt, bptt):
    inp, target = stream[:, i:i + bptt], stream[:, i + 1:i + 1 + bptt]
    out, hidden = rnn(emb(inp), hidden.detach())
    last = out[:, -1].detach()
    loss = F.cross_entropy(decoder(out).reshape(-1, vocab), target.reshape(-1))
    loss = loss + 0.1 * aux(last).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"chunk {i // bptt} loss {loss.item():.3f}")
