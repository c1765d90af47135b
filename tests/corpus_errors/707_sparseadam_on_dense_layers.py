"""Case 707 - SparseAdam given every parameter, including dense Linear weights

Source: pytorch/pytorch test/optim/test_optim.py (SparseAdam error inputs: 'SparseAdam does not support dense gradients')
Category: optimizer / sparse gradients

Reported symptom:
    RuntimeError: SparseAdam does not support dense gradients, please consider Adam instead

Root cause:
    The text classifier has a sparse EmbeddingBag plus a dense Linear
    classifier. The user creates a single SparseAdam over model.parameters();
    SparseAdam only accepts parameters whose gradients are sparse, so the step
    fails on the Linear weights.

Ground truth a good tool should report:
    The SparseAdam construction over all parameters (CAUSE): use SparseAdam
    for the embedding and Adam for the dense layers. Raised at opt.step()
    (ERROR).
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
opt = torch.optim.SparseAdam(model.parameters(), lr=1e-2)  # <- CAUSE
tokens = torch.randint(0, 200, (40,))
offsets = torch.tensor([0, 10, 20, 30])
labels = torch.tensor([0, 1, 2, 3])
for step in range(3):
    opt.zero_grad()
    loss = nn.functional.cross_entropy(model(tokens, offsets), labels)
    loss.backward()
    opt.step()  # <- ERROR
    print("step", step, loss.item())
