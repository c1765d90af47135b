"""Clean 391 - gradient accumulation done right (zero_grad only after the step)

What it does:
    A text classifier trained with micro-batches of 8 and an effective batch of 32:
    each micro-batch loss is divided by accum_steps, backward() accumulates into
    .grad, and optimizer.step() + optimizer.zero_grad() run once per window.  The
    script checks once that the accumulated gradient equals the full-batch gradient.

Why it is correct (not a bug):
    Several backward() calls without zero_grad() in between are intentional here:
    zero_grad() is called right after every step(), so each step sees exactly the
    sum over its own window.  The division by accum_steps makes it the mean.
    EXPECT: no findings

Observed (torch 2.13, CPU):
    exit code: 0
    stdout:
        accumulated grad == full-batch grad: True
        epoch 0: mean loss per window=1.0947
        epoch 1: mean loss per window=1.0832
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class BagOfWordsClassifier(nn.Module):
    def __init__(self, vocab=100, dim=24, n_classes=3):
        super().__init__()
        self.emb = nn.EmbeddingBag(vocab, dim, mode="mean")
        self.fc = nn.Sequential(nn.Linear(dim, 32), nn.ReLU(), nn.Linear(32, n_classes))

    def forward(self, tokens):
        return self.fc(self.emb(tokens))


def train(accum_steps=4, micro=8, epochs=2):
    model = BagOfWordsClassifier()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    tokens = torch.randint(0, 100, (64, 12))
    labels = torch.randint(0, 3, (64,))
    optimizer.zero_grad()
    for epoch in range(epochs):
        running = 0.0
        for i in range(0, 64, micro):
            loss = F.cross_entropy(model(tokens[i:i + micro]), labels[i:i + micro]) / accum_steps
            loss.backward()
            running += loss.item()
            if (i // micro + 1) % accum_steps == 0:
                if epoch == 0 and i // micro + 1 == accum_steps:
                    window = slice(i + micro - accum_steps * micro, i + micro)
                    full = F.cross_entropy(model(tokens[window]), labels[window])
                    ref = torch.autograd.grad(full, model.fc[0].weight)[0]
                    print("accumulated grad == full-batch grad:",
                          torch.allclose(model.fc[0].weight.grad, ref, atol=1e-6))
                optimizer.step()
                optimizer.zero_grad()
        print(f"epoch {epoch}: mean loss per window={running / (64 // (micro * accum_steps)):.4f}")


train()
