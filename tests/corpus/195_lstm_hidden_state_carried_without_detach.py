"""Case 195 - an LSTM language model whose hidden state is carried across batches without
detaching it.

Source: a frequent discuss.pytorch.org report (paraphrased): "Trying to backward through
the graph a second time" in a stateful RNN training loop.
Root cause: the hidden state returned by the LSTM still belongs to the previous batch's
graph (freed by its backward); the next backward reaches into it. Detach the state
between batches (truncated BPTT).
"""
import torch
from torch import nn

torch.manual_seed(0)
lstm = nn.LSTM(4, 8, batch_first=True)
head = nn.Linear(8, 4)
opt = torch.optim.Adam([*lstm.parameters(), *head.parameters()], lr=1e-3)
state = None
for step in range(3):
    x = torch.randn(2, 5, 4)
    out, state = lstm(x, state)  # <- CAUSE
    loss = (head(out) - x).pow(2).mean()
    opt.zero_grad()
    loss.backward()  # <- ERROR
    opt.step()
