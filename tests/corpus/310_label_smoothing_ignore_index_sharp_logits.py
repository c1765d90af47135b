"""Correct 310 - sequence tagger with label_smoothing + ignore_index, and a hand-written smoothed NLL

Category: correct (numerics: label smoothing)
What it is:
    A BiGRU tagger over padded token batches.  The tag loss is
    nn.CrossEntropyLoss(label_smoothing=0.1, ignore_index=-100) with the padding targets set
    to -100; the sentence-intent head uses a hand-written smoothed NLL on log_softmax of
    logits sharpened by 20x (mean of -log p over classes, all finite).
Why a naive tool might flag it:
    Sharp logits, a mean over every class's log-probability (including near-zero ones) and
    -100 targets; log_softmax keeps every term finite and ignore_index drops the padding.
Ground truth a good tool should report:
    EXPECT: no findings (correct training code: label smoothing, stable log_softmax)

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        step 0: loss 4.0352
        step 1: loss 3.0332
        step 2: loss 2.1008
        step 3: loss 1.9571
        step 4: loss 2.0063
        step 5: loss 2.0322
        step 6: loss 2.0451
        step 7: loss 2.0358
        grads finite: True
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
vocab, n_tags, PAD = 30, 5, 0


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(vocab, 16, padding_idx=PAD)
        self.rnn = nn.GRU(16, 24, batch_first=True, bidirectional=True)
        self.tag = nn.Linear(48, n_tags)
        self.intent = nn.Linear(48, 3)

    def forward(self, tokens):
        h, _ = self.rnn(self.emb(tokens))
        return self.tag(h), self.intent(h.mean(1))


def smoothed_nll(logits, target, smoothing=0.1):
    """Label smoothing written out: (1 - s) * NLL + s * mean over classes of -log p."""
    logp = F.log_softmax(logits, dim=-1)
    nll = -logp.gather(-1, target[:, None]).squeeze(-1)
    uniform = -logp.mean(-1)
    return ((1 - smoothing) * nll + smoothing * uniform).mean()


tokens = torch.randint(1, vocab, (4, 7))
tokens[1, 5:] = PAD
tokens[3, 3:] = PAD
tags = torch.randint(0, n_tags, (4, 7))
tags[tokens == PAD] = -100  # padding is ignored by the loss
intents = torch.tensor([0, 2, 1, 2])

model = Tagger()
tag_loss_fn = nn.CrossEntropyLoss(label_smoothing=0.1, ignore_index=-100)
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for step in range(8):
    tag_logits, intent_logits = model(tokens)
    loss = tag_loss_fn(tag_logits.reshape(-1, n_tags), tags.reshape(-1)) + smoothed_nll(intent_logits * 20.0, intents)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step}: loss {loss.item():.4f}")
print("grads finite:", all(torch.isfinite(p.grad).all().item() for p in model.parameters()))
