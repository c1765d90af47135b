"""Case 703 - parameter list of a weight-tied language model contains the shared weight twice

Source: pytorch/pytorch test/optim/test_optim.py, TestOptimRenewed.test_errors (ErrorOptimizerInput 'a param group cannot have duplicate parameters', UserWarning)
Category: optimizer construction (warning)

Reported symptom:
    UserWarning: optimizer contains a parameter group with duplicate parameters; in future, this will cause an error; see github.com/pytorch/pytorch/issues/40967 for more information

Root cause:
    The output projection shares its weight with the embedding (weight tying).
    The user collects the parameters module by module with
    `list(emb.parameters()) + list(decoder.parameters())`, so the tied tensor
    appears twice in one group. The optimizer would apply two updates to it per
    step (and keep two states); torch warns and will make this an error.

Ground truth a good tool should report:
    The concatenated parameter list (CAUSE) duplicates the tied weight; pass
    model.parameters() (which de-duplicates) instead. Warned by the optimizer
    constructor (ERROR).
"""
import torch
import torch.nn as nn

torch.manual_seed(0)

vocab, dim = 30, 12
emb = nn.Embedding(vocab, dim)
rnn = nn.GRU(dim, dim, batch_first=True)
decoder = nn.Linear(dim, vocab)
decoder.weight = emb.weight

params = list(emb.parameters()) + list(rnn.parameters()) + list(decoder.parameters())  # <- CAUSE
opt = torch.optim.Adam(params, lr=1e-3)  # <- ERROR

tokens = torch.randint(0, vocab, (4, 9))
for step in range(2):
    opt.zero_grad()
    out, _ = rnn(emb(tokens[:, :-1]))
    loss = nn.functional.cross_entropy(decoder(out).reshape(-1, vocab), tokens[:, 1:].reshape(-1))
    loss.backward()
    opt.step()
    print("step", step, loss.item())
