"""Clean 409 - text classifier on a frozen pretrained embedding table, optimizer built from
the trainable parameters only, gradients clipped by value before each step

What it does:
    An nn.Embedding is loaded with "pretrained" vectors and frozen with
    requires_grad_(False) BEFORE the optimizer is created from
    [p for p in model.parameters() if p.requires_grad].  A BiGRU + attention pooling +
    linear head is trained with clip_grad_value_(trainable, 0.5) between backward and
    step.  Padding tokens are masked out of the attention with -inf.

Why it is correct (not a bug):
    The embedding receives no gradient (its .grad stays None) and is not in the
    optimizer, by design; it is checked to be unchanged after training.  Clipping by
    value modifies .grad in place after backward and before step, which is the
    intended order.  Every sequence has at least one real token, so no attention row
    is fully -inf.
    EXPECT: no findings

Observed (torch 2.13, CPU):
    exit code: 0
    stdout:
        epoch 0: loss=1.4008
        epoch 1: loss=1.3965
        epoch 2: loss=1.3900
        epoch 3: loss=1.3807
        embedding unchanged: True | embedding grad: None
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
VOCAB, DIM, PAD = 100, 24, 0


class AttnClassifier(nn.Module):
    def __init__(self, pretrained, n_classes=4):
        super().__init__()
        self.embedding = nn.Embedding(VOCAB, DIM, padding_idx=PAD)
        with torch.no_grad():
            self.embedding.weight.copy_(pretrained)
        self.embedding.weight.requires_grad_(False)
        self.rnn = nn.GRU(DIM, 32, batch_first=True, bidirectional=True)
        self.score = nn.Linear(64, 1)
        self.head = nn.Linear(64, n_classes)

    def forward(self, tokens):
        h, _ = self.rnn(self.embedding(tokens))
        scores = self.score(h).squeeze(-1).masked_fill(tokens == PAD, float("-inf"))
        pooled = (torch.softmax(scores, dim=1).unsqueeze(-1) * h).sum(1)
        return self.head(pooled)


model = AttnClassifier(pretrained=torch.randn(VOCAB, DIM))
trainable = [p for p in model.parameters() if p.requires_grad]
optimizer = torch.optim.Adam(trainable, lr=2e-3)
emb_before = model.embedding.weight.clone()

lengths = torch.randint(3, 12, (64,))
tokens = torch.randint(1, VOCAB, (64, 12)) * (torch.arange(12) < lengths[:, None])
labels = tokens[:, 0] % 4
for epoch in range(4):
    for i in range(0, 64, 16):
        loss = F.cross_entropy(model(tokens[i:i + 16]), labels[i:i + 16])
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_value_(trainable, clip_value=0.5)
        optimizer.step()
    print(f"epoch {epoch}: loss={loss.item():.4f}")

print("embedding unchanged:", torch.equal(emb_before, model.embedding.weight),
      "| embedding grad:", model.embedding.weight.grad)
