"""Clean 407 - advantage actor-critic with separate actor and critic networks, each with
its own optimizer, the advantage detached for the policy loss

What it does:
    Rollouts of a small synthetic environment are collected; discounted returns are
    computed; the critic's values V(s) give the advantage A = R - V(s).detach().  The
    actor loss is -(log pi(a|s) * A).mean() - beta * entropy, the critic loss is
    MSE(V(s), R).  The actor optimizer steps after actor_loss.backward(), then the
    critic optimizer steps after critic_loss.backward().

Why it is correct (not a bug):
    The two losses touch disjoint parameter sets: the actor loss sees the critic only
    through `values.detach()`, so actor_loss.backward() leaves the critic's .grad
    untouched and does not need the critic's saved tensors; stepping the actor
    (in-place update of actor weights) before critic_loss.backward() is harmless
    because the critic graph saved no actor tensor.  The sampled actions are integer
    tensors (no gradient expected through sampling), log_prob carries the gradient.
    EXPECT: no findings

Observed (torch 2.13, CPU):
    exit code: 0
    stdout:
        update 0: mean reward=0.266 actor_loss=1.3623 critic_loss=2.8344
        update 1: mean reward=0.344 actor_loss=1.6395 critic_loss=3.9504
        update 2: mean reward=0.336 actor_loss=1.3969 critic_loss=3.0615
        update 3: mean reward=0.406 actor_loss=1.7794 critic_loss=4.0348
        update 4: mean reward=0.398 actor_loss=1.5444 critic_loss=3.3281
        update 5: mean reward=0.312 actor_loss=1.0012 critic_loss=1.7837
        update 6: mean reward=0.367 actor_loss=1.1546 critic_loss=2.6463
        update 7: mean reward=0.344 actor_loss=0.9185 critic_loss=1.9390
"""
import torch
import torch.nn as nn
from torch.distributions import Categorical

torch.manual_seed(0)
S_DIM, N_ACT, HORIZON, GAMMA = 4, 3, 8, 0.95
W_TRUE = torch.randn(N_ACT, S_DIM)


def env_step(state, action):
    reward = (action == (state @ W_TRUE.t()).argmax(-1)).float()
    return torch.randn_like(state), reward


actor = nn.Sequential(nn.Linear(S_DIM, 32), nn.Tanh(), nn.Linear(32, N_ACT))
critic = nn.Sequential(nn.Linear(S_DIM, 32), nn.Tanh(), nn.Linear(32, 1))
actor_opt = torch.optim.Adam(actor.parameters(), lr=3e-3)
critic_opt = torch.optim.Adam(critic.parameters(), lr=1e-2)

for update in range(8):
    states, actions, rewards = [], [], []
    s = torch.randn(16, S_DIM)  # 16 parallel environments
    for t in range(HORIZON):
        with torch.no_grad():
            a = Categorical(logits=actor(s)).sample()
        s_next, r = env_step(s, a)
        states.append(s); actions.append(a); rewards.append(r)
        s = s_next
    returns, running = [], torch.zeros(16)
    for r in reversed(rewards):
        running = r + GAMMA * running
        returns.insert(0, running)
    S, A, R = torch.cat(states), torch.cat(actions), torch.cat(returns)

    values = critic(S).squeeze(-1)
    advantage = R - values.detach()
    dist = Categorical(logits=actor(S))
    actor_loss = -(dist.log_prob(A) * advantage).mean() - 0.01 * dist.entropy().mean()
    critic_loss = (values - R).pow(2).mean()

    actor_opt.zero_grad()
    actor_loss.backward()
    actor_opt.step()
    critic_opt.zero_grad()
    critic_loss.backward()
    critic_opt.step()
    print(f"update {update}: mean reward={torch.stack(rewards).mean().item():.3f} "
          f"actor_loss={actor_loss.item():.4f} critic_loss={critic_loss.item():.4f}")
