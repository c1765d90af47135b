"""Case 950 - DDPG: the actor's loss runs through the critic, each optimizer clears its own (correct)

Source: https://github.com/vy007vikas/PyTorch-ActorCriticRL/issues/7
        (where zero_grad() goes in an actor-critic update)
Category: correct (invariant 3)
EXPECT: no findings

Reported symptom:
    None. The critic is updated on the TD target, then the actor on -Q(s, pi(s)).

Root cause:
    None. The actor's loss is backpropagated through the critic and leaves
    gradients in the critic's parameters, but the critic's optimizer clears
    them (critic_optimizer.zero_grad() right before the critic's backward)
    before its next step, and the actor's optimizer clears the actor's before
    the actor's backward.

Ground truth a good tool should report:
    Nothing. Gradients of another objective sit in the critic between its
    steps, but no critic step uses them.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

states = torch.randn(1024, 5)
actions = torch.tanh(torch.randn(1024, 2))
rewards = -(states[:, :2] - actions).pow(2).sum(1, keepdim=True)
next_states = states + 0.1 * torch.randn(1024, 5)

actor = nn.Sequential(nn.Linear(5, 32), nn.ReLU(), nn.Linear(32, 2), nn.Tanh())
critic = nn.Sequential(nn.Linear(7, 32), nn.ReLU(), nn.Linear(32, 1))
actor_optimizer = torch.optim.Adam(actor.parameters(), lr=1e-3)
critic_optimizer = torch.optim.Adam(critic.parameters(), lr=1e-3)

for it in range(25):
    idx = torch.randint(0, 1024, (64,))
    s, a, r, s2 = states[idx], actions[idx], rewards[idx], next_states[idx]

    with torch.no_grad():
        target = r + 0.99 * critic(torch.cat([s2, actor(s2)], dim=1))
    critic_loss = F.smooth_l1_loss(critic(torch.cat([s, a], dim=1)), target)
    critic_optimizer.zero_grad()
    critic_loss.backward()
    critic_optimizer.step()

    actor_loss = -critic(torch.cat([s, actor(s)], dim=1)).mean()
    actor_optimizer.zero_grad()
    actor_loss.backward()
    actor_optimizer.step()

print(f"critic {critic_loss.item():.4f} actor {actor_loss.item():.4f}")
