"""Case 840 - sparse embedding tables with SparseAdam, dense layers with Adam

Source: pytorch/pytorch test/optim/test_optim.py (SparseAdam for sparse gradients, Adam for dense ones)
Category: correct

Reported symptom:
    none - the script trains for a few steps and exits normally.

Root cause:
    none - the parameters are split by gradient layout: the sparse=True
    EmbeddingBag goes to SparseAdam and the Linear classifier to Adam; both
    optimizers are stepped after a single backward.

Ground truth a good tool should report:
    Nothing.
EXPECT: no findings
"""
import torch
import torch.nn as nn

torch.manual_seed(0)


class BagOfWords(nn.Module):
    def __init__(self, vocab=200, dim=16, classes=4):
        super().__init__()
        self.emb = nn.EmbeddingBag(vocab, dim, mode="mean", sparse=True)
        self.fc = nn.Linear(dim, classes)

    def forward(self, tokens, offsets):
        return self.fc(self.emb(tokens, offsets))


model = BagOfWords()
sparse_opt = torch.optim.SparseAdam(list(model.emb.parameters()), lr=1e-2)
dense_opt = torch.optim.Adam(model.fc.parameters(), lr=1e-2)
tokens = torch.randint(0, 200, (40,))
offsets = torch.tensor([0, 10, 20, 30])
labels = torch.tensor([0, 1, 2, 3])
for step in range(3):
    sparse_opt.zero_grad()
    dense_opt.zero_grad()
    loss = nn.functional.cross_entropy(model(tokens, offsets), labels)
    loss.backward()
    sparse_opt.step()
    dense_opt.step()
    print("step", step, round(loss.item(), 4))
