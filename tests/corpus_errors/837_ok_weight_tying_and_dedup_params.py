"""Case 837 - weight-tied language model optimised through model.parameters()

Source: pytorch/pytorch test/optim/test_optim.py, TestOptimRenewed.test_errors (duplicate-parameter checks) and test/test_nn.py parameter assignment (assigning an nn.Parameter is allowed)
Category: correct

Reported symptom:
    none - the script trains for a few steps and exits normally.

Root cause:
    none - the decoder weight is tied by assigning the embedding's
    nn.Parameter itself (same shape), and the optimizer receives
    model.parameters(), which yields the shared tensor only once.

Ground truth a good tool should report:
    Nothing.
EXPECT: no findings
"""
import torch
import torch.nn as nn

torch.manual_seed(0)


class TiedLM(nn.Module):
    def __init__(self, vocab=30, dim=12):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.rnn = nn.GRU(dim, dim, batch_first=True)
        self.decoder = nn.Linear(dim, vocab)
        self.decoder.weight = self.emb.weight

    def forward(self, tokens):
        out, _ = self.rnn(self.emb(tokens))
        return self.decoder(out)


model = TiedLM()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
tokens = torch.randint(0, 30, (4, 9))
for step in range(3):
    opt.zero_grad()
    logits = model(tokens[:, :-1])
    loss = nn.functional.cross_entropy(logits.reshape(-1, 30), tokens[:, 1:].reshape(-1))
    loss.backward()
    opt.step()
    print("step", step, round(loss.item(), 4), "tied:", model.decoder.weight is model.emb.weight)
