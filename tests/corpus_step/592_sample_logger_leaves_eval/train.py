"""Case 592 - a sample-logging callback switches the model to eval mode and leaves it

Source: https://github.com/shubhamagarwal92/mmd/issues/14
        (after evaluate, nothing turns dropout back on)
Category: 5 - global switches are scoped

Reported symptom:
    Dropout only acts during the first few steps; after the first logged
    sample the model trains without regularisation and overfits.

Root cause:
    SampleLogger.on_step_end() (callbacks.py) calls model.eval() and returns
    without restoring train mode; Trainer.fit() never calls model.train() again.

Ground truth a good tool should report:
    Optimizer steps after the first sample logging update the model in eval
    mode; the eval() in SampleLogger.on_step_end() is not undone.
"""
import torch
import torch.nn as nn

from callbacks import SampleLogger
from trainer import Trainer

torch.manual_seed(0)


class Seq2Seq(nn.Module):
    def __init__(self, vocab=30, dim=32):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.rnn = nn.GRU(dim, dim, batch_first=True)
        self.drop = nn.Dropout(0.4)
        self.out = nn.Linear(dim, vocab)

    def forward(self, src):
        h, _ = self.rnn(self.drop(self.embed(src)))
        return self.out(self.drop(h))


tokens = torch.randint(0, 30, (160, 10))
batches = [(tokens[i:i + 16], tokens[i:i + 16].flip(1)) for i in range(0, 160, 16)]
model = Seq2Seq()
optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
trainer = Trainer(model, optimizer, [SampleLogger(tokens[:4], every=4)])
loss = trainer.fit(batches, epochs=2)
print(f"final loss {loss:.4f}  training flag {model.training}")
