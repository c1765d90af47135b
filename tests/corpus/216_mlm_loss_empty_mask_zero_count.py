"""Case 216 - masked-token loss divided by the number of masked tokens, and a batch
where no token was masked

Source: https://github.com/NVIDIA-NeMo/Automodel/issues/3796
        "Fully-masked batch yields NaN loss in 3 of 4 losses" (losses normalised by
        num_label_tokens without a guard for 0); same failure in
        https://github.com/lucidrains/soundstorm-pytorch/issues/36 ("Cross Entropy loss
        is NaN due to zero element mask at some point")
Category: nan-in-forward (0 / 0 from an empty selection)

Reported symptom:
    Training runs, then one step reports loss = nan; afterwards every parameter is NaN
    and the run continues with a destroyed model.

Root cause:
    The per-token loss is multiplied by the random MLM mask and divided by
    mask.sum().  Short, mostly padded sequences can end up with no selected token;
    then the numerator and the count are both 0 and the loss is 0/0 = NaN.  In
    backward, DivBackward0 gives 1/0 = inf to the numerator, multiplied by the zero
    mask it becomes NaN in every gradient, and Adam writes NaN into all weights.

Ground truth a good tool should report:
    NaN first produced by the division at line 72 (denominator mask.sum() == 0 in
    the batch of step 2); the mask was built at line 68.  Fix: divide by
    mask.sum().clamp(min=1) or skip the step when nothing is masked.
    EXPECT: kind=nan_forward; nan_op=div; cause_line=72; created_line=68

Observed (torch 2.13, CPU):
    exit code: 0
    stdout:
        step 0: masked tokens=4 loss=3.6229
        step 1: masked tokens=4 loss=3.6385
        step 2: masked tokens=0 loss=nan
        lm_head.weight has NaN: True
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
VOCAB, PAD, MASK_ID, MASK_PROB = 40, 0, 1, 0.15


class TinyMLM(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, dim, padding_idx=PAD)
        self.encoder = nn.GRU(dim, dim, batch_first=True, bidirectional=True)
        self.lm_head = nn.Linear(2 * dim, VOCAB)

    def forward(self, tokens):
        hidden, _ = self.encoder(self.embed(tokens))
        return self.lm_head(hidden)


def make_batch(lengths, seq_len=10):
    tokens = torch.full((len(lengths), seq_len), PAD)
    for i, n in enumerate(lengths):
        tokens[i, :n] = torch.randint(2, VOCAB, (n,))
    return tokens


model = TinyMLM()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
batches = [make_batch([10, 9, 8, 10]), make_batch([7, 10, 6, 9]), make_batch([3, 2])]

for step, tokens in enumerate(batches):
    mask = (torch.rand(tokens.shape) < MASK_PROB) & (tokens != PAD)  # <- CREATED: may select nothing
    inputs = tokens.masked_fill(mask, MASK_ID)
    logits = model(inputs)
    tok_loss = F.cross_entropy(logits.transpose(1, 2), tokens, reduction="none")
    loss = (tok_loss * mask).sum() / mask.sum()  # <- CAUSE,NAN: 0 / 0 when mask is empty
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"step {step}: masked tokens={int(mask.sum())} loss={loss.item():.4f}")

print("lm_head.weight has NaN:", torch.isnan(model.lm_head.weight).any().item())
