"""Case 202 - attention pooling over a user's click history: a cold-start user has an
all-masked row, softmax over all -inf gives NaN

Source: https://github.com/pytorch/pytorch/issues/41508
        "nn.MultiheadAttention causes gradients to become NaN under some use cases"
        (rows whose every key is masked); same mechanism in
        https://github.com/allenai/allennlp/issues/890 ("util.masked_log_softmax()
        Returning Nan's" for an all-zero mask row).
Category: nan-in-forward (softmax over a row that is entirely -inf)

Reported symptom:
    The loss is NaN on some batches only (those containing a user without history);
    after one optimizer step every weight is NaN.

Root cause:
    The padding mask is applied with masked_fill(~mask, -inf).  For a user with an
    empty history every position of the row is -inf; softmax computes
    exp(-inf - max) with max = -inf, i.e. exp(NaN), so the whole row of weights is
    NaN, the pooled vector is NaN and so is the BCE loss.  Backward spreads NaN to
    all parameters that touched the batch.

Ground truth a good tool should report:
    First NaN in the forward pass: the output of `torch.softmax(scores, dim=1)`,
    batch row 2, whose mask row is all False because `hist_len` is 0
    for that user.  Fix: fill with a finite large negative value (e.g.
    torch.finfo(dtype).min) and/or zero the pooled vector for empty histories.
    EXPECT: kind=nan_forward; nan_op=softmax; cause_line=59; nan_line=60; created_line=70

Observed (torch 2.13, CPU):
    exit code: 0
    stdout:
        batch row 2 history length: 0
        attention weights of row 2: [nan, nan, nan, nan, nan, nan]
        step 0 loss: nan
        item_emb.weight has NaN after step: True
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
N_ITEMS, DIM, MAX_HIST = 50, 16, 6


class HistoryAttentionCTR(nn.Module):
    """DIN-style model: attend from the candidate item over the user's past clicks."""

    def __init__(self):
        super().__init__()
        self.item_emb = nn.Embedding(N_ITEMS, DIM)
        self.query = nn.Linear(DIM, DIM)
        self.out = nn.Sequential(nn.Linear(2 * DIM, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, history, hist_len, candidate):
        h = self.item_emb(history)                      # (B, T, D)
        c = self.item_emb(candidate)                    # (B, D)
        scores = torch.einsum("btd,bd->bt", h, self.query(c)) / DIM ** 0.5
        mask = torch.arange(MAX_HIST)[None, :] < hist_len[:, None]
        scores = scores.masked_fill(~mask, float("-inf"))  # <- CAUSE: all -inf row for empty history
        weights = torch.softmax(scores, dim=1)  # <- NAN
        pooled = torch.einsum("bt,btd->bd", weights, h)
        return self.out(torch.cat([pooled, c], dim=1)).squeeze(1), weights


model = HistoryAttentionCTR()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

batch = 4
history = torch.randint(1, N_ITEMS, (batch, MAX_HIST))
hist_len = torch.tensor([6, 3, 0, 5])  # <- CREATED: user 2 is a cold-start user (no clicks yet)
candidate = torch.randint(1, N_ITEMS, (batch,))
clicked = torch.tensor([1.0, 0.0, 1.0, 0.0])

logits, weights = model(history, hist_len, candidate)
loss = F.binary_cross_entropy_with_logits(logits, clicked)
print("batch row 2 history length:", int(hist_len[2]))
print("attention weights of row 2:", [round(w, 4) for w in weights[2].tolist()])
print("step 0 loss:", loss.item())
optimizer.zero_grad()
loss.backward()
optimizer.step()
print("item_emb.weight has NaN after step:", torch.isnan(model.item_emb.weight).any().item())
