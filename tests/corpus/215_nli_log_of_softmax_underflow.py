"""Case 215 - NLI classifier: -torch.log(softmax(logits)) with large logits, a probability
underflows to exactly 0 and the loss is NaN

Source: https://github.com/allenai/allennlp/issues/2797
        "Softmax giving absolute 0 resulting in 'nan' loss value" (a modified
        DecomposableAttention model with frozen, unnormalised GloVe embeddings; the
        label logits were around -140..-250, softmax returned exact zeros and
        -torch.log(label_probs) * labels gave NaN)
Category: nan-in-forward (log of an underflowed probability)

Reported symptom:
    ValueError: nan loss encountered, after switching to frozen pretrained embeddings.

Root cause:
    The logits spread over more than ~104 units, so softmax gives probabilities that
    underflow to exactly 0.0 in float32.  torch.log(0) = -inf; the one-hot product
    then computes inf * 0 = NaN for every non-target class whose probability
    underflowed, and inf for a target that underflowed.  F.log_softmax (or
    F.cross_entropy on the logits) computes the same quantity stably.

Ground truth a good tool should report:
    First non-finite value: -inf produced by torch.log at line 67 on zeros that
    F.softmax produced at line 66 (underflow, not an invalid input); it becomes
    NaN at the multiplication by the one-hot labels on line 68.  Fix:
    F.log_softmax(label_logits, dim=-1) instead of log(softmax(...)).
    EXPECT: kind=nan_forward; nan_op=log; cause_line=67; created_line=66; nan_line=68

Observed (torch 2.13, CPU):
    exit code: 0
    stdout:
        step 0: min prob=0 loss=nan
        step 1: min prob=nan loss=nan
        step 2: min prob=nan loss=nan
        any classifier weight NaN: True
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
VOCAB, DIM, N_LABELS = 50, 16, 3


class BagOfWordsNLI(nn.Module):
    def __init__(self, pretrained):
        super().__init__()
        self.embed = nn.Embedding.from_pretrained(pretrained, freeze=True)
        self.compare = nn.Sequential(nn.Linear(4 * DIM, 32), nn.ReLU())
        self.classify = nn.Linear(32, N_LABELS)

    def forward(self, premise, hypothesis):
        p = self.embed(premise).sum(1)  # no normalisation of the pretrained vectors
        h = self.embed(hypothesis).sum(1)
        return self.classify(self.compare(torch.cat([p, h, p - h, p * h], dim=1)))


glove_like = torch.randn(VOCAB, DIM) * 6.0  # unnormalised "pretrained" vectors
model = BagOfWordsNLI(glove_like)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
premise = torch.randint(0, VOCAB, (8, 12))
hypothesis = torch.randint(0, VOCAB, (8, 9))
labels = F.one_hot(torch.randint(0, N_LABELS, (8,)), N_LABELS)

for step in range(3):
    label_logits = model(premise, hypothesis)
    label_probs = F.softmax(label_logits, dim=-1)  # <- CREATED: exact zeros after underflow
    log_label_probs = -torch.log(label_probs)  # <- CAUSE: log(0) = inf; use F.log_softmax
    loss = (log_label_probs * labels.float()).sum(1).mean()  # <- NAN: inf * 0
    print(f"step {step}: min prob={label_probs.min().item():.3g} loss={loss.item()}")
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

print("any classifier weight NaN:", torch.isnan(model.classify.weight).any().item())
