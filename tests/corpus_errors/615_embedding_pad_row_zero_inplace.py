"""Case 615 - resetting the padding row of an embedding in-place during training

Source: pytorch/pytorch test/test_autograd.py, test_inplace_on_view_leaf_errors (assertRaisesRegex "a view of a leaf Variable that requires grad is being used in an in-place operation.")
Category: in-place

Reported symptom:
    RuntimeError: a view of a leaf Variable that requires grad is being used in an in-place operation.

Root cause:
    After each optimizer step the script re-zeroes the padding row with
    emb.weight[PAD].zero_(). emb.weight[PAD] is a view of the embedding weight, a
    leaf that requires grad, and the in-place write happens with grad mode on, which
    autograd forbids.

Ground truth a good tool should report:
    The `emb.weight[PAD].zero_()` line must run under torch.no_grad() (or use
    nn.Embedding(padding_idx=PAD)).
"""
import torch
from torch import nn

torch.manual_seed(0)

PAD, VOCAB, DIM = 0, 50, 16
emb = nn.Embedding(VOCAB, DIM)
rnn = nn.GRU(DIM, 32, batch_first=True)
head = nn.Linear(32, 2)
params = list(emb.parameters()) + list(rnn.parameters()) + list(head.parameters())
opt = torch.optim.Adam(params, lr=1e-3)

tokens = torch.randint(1, VOCAB, (8, 12))
tokens[:, 9:] = PAD
labels = torch.randint(0, 2, (8,))

for step in range(3):
    out, h = rnn(emb(tokens))
    loss = nn.functional.cross_entropy(head(h[-1]), labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    emb.weight[PAD].zero_()  # <- CAUSE,ERROR
    print(f"step {step} loss {loss.item():.3f}")
