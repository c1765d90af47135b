"""Case 568 - per-item scores packed with torch.Tensor(list) before the loss

Source: https://github.com/pytorch/pytorch/issues/61410
        "If you convert a list of parameters with requires_grad=True into a tensor, you lose the gradients."
Category: 8 - tensors that require grad do not leave autograd silently

Reported symptom:
    A scorer network rates each candidate of a query in a Python loop; the
    scores are packed into one tensor for the loss. backward() complained that
    the loss does not require grad, so requires_grad was switched on for the
    packed scores. Now it runs, and the scorer's weights never change.

Root cause:
    torch.Tensor(list_of_tensors) (like torch.tensor and torch.as_tensor of a
    list) builds a new tensor from the values: the scores' history is gone.
    Setting requires_grad on it makes a new leaf; backward stops there.

Ground truth a good tool should report:
    No parameter of the scorer gets a gradient: the scores left autograd at the
    `torch.Tensor(scores)` line (use torch.stack); the requires_grad after it
    only hides the break.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

scorer = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
optimizer = torch.optim.SGD(scorer.parameters(), lr=0.05)

queries = torch.randn(20, 6, 8)  # 20 queries, 6 candidates each
relevance = queries[..., 0].softmax(-1)

for epoch in range(10):
    for q in range(20):
        scores = []
        for candidate in queries[q]:
            scores.append(scorer(candidate).squeeze())
        pred = torch.Tensor(scores)  # <- CAUSE
        pred.requires_grad_(True)
        loss = F.kl_div(pred.log_softmax(-1), relevance[q], reduction="sum")
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

print(f"last loss {loss.item():.4f}")
