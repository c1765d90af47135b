"""Case 562 - validation every N steps goes through a predict() helper that calls model.eval()

Source: https://github.com/joeynmt/joeynmt/issues/184
        "if the validation is not on the end of a full epoch, the remainder of the epoch is trained on the model.eval() state?"
Category: 5 - global switches are scoped

Reported symptom:
    After a validation run in the middle of an epoch the model comes back to the
    training loop still in eval mode; only the next epoch's model.train() puts it
    back, so the rest of every epoch trains with dropout off.

Root cause:
    TrainManager._validate() calls the generic predict() helper, which switches
    the model to eval mode for decoding (correct for a prediction function), and
    _validate() returns without switching back. The batch loop only calls
    model.train() at the start of each epoch.

Ground truth a good tool should report:
    Training steps after the first mid-epoch validation run in eval mode; the
    validation path (`predict(...)` called from _validate, which leaves eval on)
    must restore train mode, or the loop must call model.train() after it.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Seq2Seq(nn.Module):
    def __init__(self, vocab=20, d=32):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.enc = nn.Sequential(nn.Linear(d, d), nn.ReLU(), nn.Dropout(0.3))
        self.out = nn.Linear(d, vocab)

    def forward(self, src):
        return self.out(self.enc(self.emb(src)))


def predict(model, src):
    """Greedy decoding of a batch (used for validation and for testing)."""
    model.eval()
    with torch.no_grad():
        return model(src).argmax(-1)


class TrainManager:
    def __init__(self, model, validation_freq=4):
        self.model = model
        self.optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        self.validation_freq = validation_freq
        self.steps = 0

    def _validate(self, dev):
        hyps = predict(self.model, dev)  # <- CAUSE
        return (hyps == dev).float().mean().item()

    def _train_step(self, batch):
        loss = F.cross_entropy(self.model(batch).flatten(0, 1), batch.flatten())
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()

    def train_and_validate(self, batches, dev, epochs=3):
        for epoch in range(epochs):
            self.model.train()
            for batch in batches:
                loss = self._train_step(batch)
                self.steps += 1
                if self.steps % self.validation_freq == 0:
                    acc = self._validate(dev)  # <- CAUSE
            print(f"epoch {epoch}: loss {loss:.4f}  dev acc {acc:.3f}")


data = torch.randint(0, 20, (96, 6))
batches = [data[i:i + 8] for i in range(0, 80, 8)]
TrainManager(Seq2Seq()).train_and_validate(batches, data[80:])
