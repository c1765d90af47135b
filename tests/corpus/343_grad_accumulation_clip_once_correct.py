"""Correct 343 - gradient accumulation done right (zero once per window, loss / k, clip once)

Source: the corrected loop of https://github.com/huggingface/transformers/issues/1563
        (clip under the `% gradient_accumulation_steps` branch, right before step) and
        of https://github.com/thunlp/OpenPrompt/issues/106 (step inside that branch)
Category: correct script (accumulation window)

What it does:
    Micro-batches of 4 examples, windows of k=3 micro-batches, 8 micro-batches in all
    (the last window is short and is still stepped, with the loss scaled by its real
    length).  zero_grad() runs once per window, right after the step; the clip runs
    once per window on the accumulated gradient, between the last backward() and
    step().  The trainable-parameter list is a real list, reused by the optimizer
    and by clip_grad_norm_.  The first window's accumulated gradient is checked
    against the gradient of the same 12 examples as one batch.

Ground truth a good tool should report:
    EXPECT: no findings

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        window 0 accumulated grad == full-batch grad: True
        step 1 after micro-batch 3: grad norm 2.1924 (clipped to 1.0)
        step 2 after micro-batch 6: grad norm 2.2453 (clipped to 1.0)
        step 3 after micro-batch 8: grad norm 2.0070 (clipped to 1.0)
"""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(10, 32), nn.GELU(), nn.LayerNorm(32), nn.Linear(32, 5))
params = [p for p in model.parameters() if p.requires_grad]
optimizer = torch.optim.AdamW(params, lr=1e-3, weight_decay=0.01)
accum_steps, max_norm = 3, 1.0
micro_batches = [(torch.randn(4, 10), torch.randint(0, 5, (4,))) for _ in range(8)]
n = len(micro_batches)

reference = copy.deepcopy(model)  # snapshot for the first-window check
xs = torch.cat([x for x, _ in micro_batches[:accum_steps]])
ys = torch.cat([y for _, y in micro_batches[:accum_steps]])
full_grads = torch.autograd.grad(F.cross_entropy(reference(xs), ys), list(reference.parameters()))

optimizer.zero_grad()
n_steps = 0
for i, (x, y) in enumerate(micro_batches):
    window_start = (i // accum_steps) * accum_steps
    window_len = min(accum_steps, n - window_start)
    loss = F.cross_entropy(model(x), y) / window_len
    loss.backward()

    if (i + 1) % accum_steps == 0 or i + 1 == n:
        if n_steps == 0:
            same = all(torch.allclose(p.grad, g, atol=1e-6) for p, g in zip(params, full_grads))
            print("window 0 accumulated grad == full-batch grad:", same)
        norm = torch.nn.utils.clip_grad_norm_(params, max_norm)
        optimizer.step()
        optimizer.zero_grad()
        n_steps += 1
        print(f"step {n_steps} after micro-batch {i + 1}: grad norm {norm.item():.4f} (clipped to {max_norm})")
