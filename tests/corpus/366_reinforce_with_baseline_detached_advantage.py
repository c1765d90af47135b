"""Case 366 - correct: REINFORCE with a learned baseline, -(log_prob * advantage.detach())

Source: https://github.com/pytorch/examples/blob/main/reinforcement_learning/reinforce.py
        (policy loss `-log_prob * R`); baseline variant as in Sutton & Barto,
        "REINFORCE with Baseline" (13.4)
Category: correct code a naive tool flags (detached advantage, non-differentiable sampling)

What the code does:
    A policy network samples actions in a small corridor world (pure Python).
    After each episode the discounted returns are computed; a separate value
    network predicts a baseline; the policy loss is
    `-(log_probs * (returns - values).detach()).sum()` so the baseline only
    reduces variance and gets no policy gradient, and the value network is
    trained by its own MSE loss.  One optimizer steps both networks.

Why a naive tool might flag it:
    The advantage is computed from the value network and then detached (a cut
    on a tensor that depends on parameters); actions come from
    `Categorical.sample()` (no gradient); the returns are Python floats turned
    into a tensor.

Ground truth a good tool should report:
    Nothing: both networks get the gradients they should.
    EXPECT: no findings

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        mean episode length, first 20 episodes: 8.1
        mean episode length, last 20 episodes: 4.1
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical

torch.manual_seed(0)
N_CELLS, GOAL, GAMMA = 6, 5, 0.95


def one_hot(pos):
    return F.one_hot(torch.tensor(pos), N_CELLS).float()


policy = nn.Sequential(nn.Linear(N_CELLS, 16), nn.Tanh(), nn.Linear(16, 2))
value = nn.Sequential(nn.Linear(N_CELLS, 16), nn.Tanh(), nn.Linear(16, 1))
optimizer = torch.optim.Adam(list(policy.parameters()) + list(value.parameters()), lr=1e-2)

lengths = []
for episode in range(120):
    pos, log_probs, states, rewards = 1, [], [], []
    for t in range(12):
        s = one_hot(pos)
        dist = Categorical(logits=policy(s))
        action = dist.sample()
        log_probs.append(dist.log_prob(action))
        states.append(s)
        pos = max(0, pos + (1 if action.item() == 1 else -1))
        rewards.append(1.0 if pos == GOAL else -0.05)
        if pos == GOAL:
            break
    returns, g = [], 0.0
    for r in reversed(rewards):
        g = r + GAMMA * g
        returns.insert(0, g)
    returns = torch.tensor(returns)
    values = value(torch.stack(states)).squeeze(1)
    advantage = returns - values
    policy_loss = -(torch.stack(log_probs) * advantage.detach()).sum()
    value_loss = F.mse_loss(values, returns)
    optimizer.zero_grad()
    (policy_loss + value_loss).backward()
    optimizer.step()
    lengths.append(len(rewards))

print("mean episode length, first 20 episodes:", sum(lengths[:20]) / 20)
print("mean episode length, last 20 episodes:", sum(lengths[-20:]) / 20)
