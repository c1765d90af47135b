"""Case 944 - actor-critic with stacked log-probabilities and returns from floats (correct)

Source: https://github.com/kengz/SLM-Lab/pull/133
        "solution: use `torch.stack` instead."
Category: correct (invariant 8)
EXPECT: no findings

Reported symptom:
    None. The agent stores the log-probability and value of each step, the
    rewards come back from the environment as Python floats, and the discounted
    returns are built in a Python loop.

Root cause:
    None. The log-probabilities and values are gathered with torch.stack, so
    both networks keep their graph; torch.tensor(...) is used only for the
    returns, which are data (Python floats), and the advantage is detached on
    purpose for the policy term. Actions go to the environment with .item().

Ground truth a good tool should report:
    Nothing.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

obs_dim, n_actions, gamma = 4, 4, 0.95
actor = nn.Sequential(nn.Linear(obs_dim, 32), nn.Tanh(), nn.Linear(32, n_actions))
critic = nn.Sequential(nn.Linear(obs_dim, 32), nn.Tanh(), nn.Linear(32, 1))
optimizer = torch.optim.Adam(list(actor.parameters()) + list(critic.parameters()), lr=1e-2)

for episode in range(30):
    log_probs, values, rewards = [], [], []
    obs = torch.randn(obs_dim)
    for t in range(16):
        dist = torch.distributions.Categorical(logits=actor(obs))
        action = dist.sample()
        log_probs.append(dist.log_prob(action))
        values.append(critic(obs).squeeze(-1))
        reward = 1.0 if action.item() == int(obs.argmax()) else 0.0
        rewards.append(reward)
        obs = torch.randn(obs_dim)
    returns, running = [], 0.0
    for r in reversed(rewards):
        running = r + gamma * running
        returns.insert(0, running)
    returns = torch.tensor(returns)
    values = torch.stack(values)
    advantages = returns - values.detach()
    policy_loss = -(torch.stack(log_probs) * advantages).mean()
    loss = policy_loss + 0.5 * F.mse_loss(values, returns)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

print(f"last loss {loss.item():.4f}, last return {returns[0].item():.2f}")
