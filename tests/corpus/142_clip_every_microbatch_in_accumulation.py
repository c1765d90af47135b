"""Case 142 - gradient clipping inside the accumulation window (clips each micro-batch)

Source: https://github.com/huggingface/transformers/issues/986
        "Potential bug with gradient clipping when using gradient accumulation in
        examples" (run_squad.py clipped right after every loss.backward(); "the first
        accumulated gradients might get clipped several times hence giving more weight
        to last accumulated gradients"); also
        https://github.com/huggingface/transformers/issues/1563 ("clip_grad_norm_
        should be applied before optimizer.step() not after each backward"), fixed by
        moving the clip under the `% gradient_accumulation_steps` branch.
Category: training-step protocol (accumulation window)

Reported symptom:
    No error.  With gradient_accumulation_steps > 1 the update is not the clipped
    full-batch gradient: early micro-batches are shrunk again and again, the last one
    the least, so the step direction is biased towards the last micro-batch.

Root cause:
    clip_grad_norm_ rescales the *running sum* in .grad after each backward().  Every
    clip but the last acts on a partial sum that the next backward() adds to, so the
    clip is applied to the wrong quantity; it should run once, just before
    optimizer.step(), on the accumulated gradient.

Ground truth a good tool should report:
    clip_grad_norm_ at line 78 rescales `.grad` while the accumulation window is
    still open (the next access is another backward() accumulating into the clipped
    value), 3 times out of 4 per optimizer step at line 81.  Fix: move the clip into
    the `if (i + 1) % accum_steps == 0` branch, right before the step.  A correctly
    clipped window gives the 4 micro-batches equal weight.
    EXPECT: kind=clip_inside_accumulation; cause_line=78; step_line=81

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        window 0: cosine(applied grad, clipped window grad) = 0.8214
           weight of micro-batches 1..4 in it: 0.046 0.066 0.167 0.420
        window 1: cosine(applied grad, clipped window grad) = 0.9086
           weight of micro-batches 1..4 in it: 0.058 0.109 0.243 0.519
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

VOCAB, CLASSES = 50, 3


class BagClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.EmbeddingBag(VOCAB, 16, mode="mean")
        self.out = nn.Linear(16, CLASSES)

    def forward(self, tokens):
        return self.out(self.emb(tokens))


model = BagClassifier()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
accum_steps, max_grad_norm = 4, 0.1
batches = [(torch.randint(0, VOCAB, (6, 7)), torch.randint(0, CLASSES, (6,))) for _ in range(8)]


def flat_grad(m):
    return torch.cat([p.grad.reshape(-1) for p in m.parameters()])


optimizer.zero_grad()
window, coefs = [], []
for i, (tokens, labels) in enumerate(batches):
    # reference: this micro-batch's own gradient at the current weights
    loss_i = F.cross_entropy(model(tokens), labels) / accum_steps
    window.append(torch.cat([g.reshape(-1) for g in torch.autograd.grad(loss_i, list(model.parameters()))]))

    loss = F.cross_entropy(model(tokens), labels) / accum_steps
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)  # <- CAUSE: clips the partial sum of every micro-batch
    coefs.append(min(1.0, max_grad_norm / (norm.item() + 1e-6)))
    if (i + 1) % accum_steps == 0:
        optimizer.step()  # <- READ
        applied = flat_grad(model)
        total = torch.stack(window).sum(0)
        wanted = total * min(1.0, max_grad_norm / (total.norm().item() + 1e-6))
        cos = F.cosine_similarity(applied, wanted, dim=0).item()
        print(f"window {i // accum_steps}: cosine(applied grad, clipped window grad) = {cos:.4f}")
        # weight each micro-batch gradient ended up with in the applied sum
        weights = [torch.tensor(coefs[k:]).prod().item() for k in range(accum_steps)]
        print("   weight of micro-batches 1..4 in it:", " ".join(f"{w:.3f}" for w in weights))
        optimizer.zero_grad()
        window, coefs = [], []
