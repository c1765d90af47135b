"""Case 198 - per-batch standardisation of rewards with a batch of one sample.

Source: a frequent report (paraphrased): "NaN loss in REINFORCE when the episode has one
step".
Root cause: std() of a single value is NaN (Bessel's correction divides by n-1 = 0); the
normalised returns are NaN. Guard for one sample or use std(unbiased=False) plus an epsilon.
"""
import torch
from torch import nn

torch.manual_seed(0)
policy = nn.Linear(4, 2)
opt = torch.optim.Adam(policy.parameters(), lr=1e-2)
states = torch.randn(1, 4)
actions = torch.tensor([1])
returns = torch.tensor([1.5])
returns = (returns - returns.mean()) / (returns.std() + 1e-8)  # <- CAUSE
log_probs = torch.log_softmax(policy(states), dim=1)[0, actions]
loss = -(log_probs * returns).sum()
opt.zero_grad()
loss.backward()
opt.step()
print(float(loss))  # <- NAN
