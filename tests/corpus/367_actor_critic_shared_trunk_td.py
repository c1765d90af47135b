"""Case 367 - correct: one-step actor-critic with a trunk shared by the actor and the critic

Source: https://github.com/pytorch/examples/blob/main/reinforcement_learning/actor_critic.py
        (shared `affine1` layer feeding `action_head` and `value_head`; actor
        loss uses the detached advantage, critic loss a smooth L1 on the value)
Category: correct code a naive tool flags (bootstrapped target, detach, two losses on one trunk)

What the code does:
    A 4x4 grid world (pure Python).  One network with a shared trunk outputs
    action logits and a state value.  At every step the TD target
    `r + gamma * V(s').detach()` (zero at the terminal state) gives the TD error;
    the actor loss is `-log_prob * td_error.detach()`, the critic loss
    `td_error ** 2`, plus an entropy bonus.  The trunk receives gradients from
    all three terms through one backward.

Why a naive tool might flag it:
    The bootstrap target comes from the same network and is detached; the
    TD error is used detached in one loss and attached in another; the
    next-state forward's graph is never back-propagated (only its detached
    value is used).

Ground truth a good tool should report:
    Nothing: this is the textbook semi-gradient update.
    EXPECT: no findings

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        mean steps, first 10 episodes: 23.8
        mean steps, last 10 episodes: 6.5
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical

torch.manual_seed(0)
SIZE, GAMMA = 4, 0.9
MOVES = [(0, 1), (1, 0), (0, -1), (-1, 0)]


class ActorCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(SIZE * SIZE, 32), nn.ReLU())
        self.actor = nn.Linear(32, 4)
        self.critic = nn.Linear(32, 1)

    def forward(self, state):
        h = self.trunk(state)
        return self.actor(h), self.critic(h).squeeze(-1)


def encode(cell):
    return F.one_hot(torch.tensor(cell[0] * SIZE + cell[1]), SIZE * SIZE).float()


net = ActorCritic()
optimizer = torch.optim.Adam(net.parameters(), lr=5e-3)
steps_per_episode = []
for episode in range(40):
    cell = (0, 0)
    for t in range(30):
        logits, v = net(encode(cell))
        dist = Categorical(logits=logits)
        action = dist.sample()
        dr, dc = MOVES[action.item()]
        nxt = (min(max(cell[0] + dr, 0), SIZE - 1), min(max(cell[1] + dc, 0), SIZE - 1))
        done = nxt == (SIZE - 1, SIZE - 1)
        reward = 1.0 if done else -0.02
        with torch.no_grad():
            _, v_next = net(encode(nxt))
        target = reward + GAMMA * v_next * (0.0 if done else 1.0)
        td_error = target - v
        loss = (-dist.log_prob(action) * td_error.detach()
                + td_error.pow(2)
                - 0.01 * dist.entropy())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        cell = nxt
        if done:
            break
    steps_per_episode.append(t + 1)

print("mean steps, first 10 episodes:", sum(steps_per_episode[:10]) / 10)
print("mean steps, last 10 episodes:", sum(steps_per_episode[-10:]) / 10)
