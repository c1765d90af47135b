"""Case 804 - manual SGD, weight decay, clipping and padding reset under torch.no_grad()

Source: pytorch/pytorch test/test_autograd.py, test_no_grad_assignment / test_no_requires_grad_inplace (in-place edits of leaves are fine with grad mode off)
Category: correct

Reported symptom:
    none: the script runs to completion without error or warning.

Root cause:
    No bug. Every in-place change to a leaf that requires grad (the SGD update,
    weight decay, weight clipping and zeroing the embedding's padding row) happens
    inside torch.no_grad() and only after loss.backward() has consumed the graph
    that saved those weights; gradients are reset to None before the next step.

Ground truth a good tool should report:
    Nothing.

EXPECT: no findings
"""
import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(0)

PAD = 0
emb = nn.Embedding(30, 8)
fc = nn.Linear(8, 2)
params = [*emb.parameters(), *fc.parameters()]
lr, wd, clip = 0.1, 1e-3, 0.5

tokens = torch.randint(1, 30, (6, 5))
tokens[:, 3:] = PAD
labels = torch.randint(0, 2, (6,))

for step in range(4):
    logits = fc(emb(tokens).mean(dim=1))
    loss = F.cross_entropy(logits, labels)
    loss.backward()
    with torch.no_grad():
        for p in params:
            p -= lr * p.grad
            p.mul_(1 - lr * wd)
            p.grad = None
        fc.weight.clamp_(-clip, clip)
        emb.weight[PAD].zero_()
    print(f"step {step} loss {loss.item():.4f}")
