"""Case 565 - actor-critic whose policy loss is built from torch.tensor(log_probs)

Source: https://github.com/kengz/SLM-Lab/pull/133
        "`torch.tensor` creates a brand new tensor detached from the computation graph"
Category: 8 - tensors that require grad do not leave autograd silently

Reported symptom:
    REINFORCE, actor-critic and PPO agents stopped solving CartPole. No error:
    the value loss falls, the policy stays where it started.

Root cause:
    The agent keeps the log-probability of each action it took in a Python list
    and, at the end of the episode, turns the list into one tensor with
    torch.tensor(...). That copies the numbers and drops the graph back to the
    policy network. The total loss is policy_loss + value_loss, so backward()
    succeeds through the critic, and the actor's parameters get no gradient.

Ground truth a good tool should report:
    The actor's parameters got no gradient: the log-probabilities left autograd
    at the `torch.tensor(self.log_probs)` line in agent.py (use torch.stack).
"""
import torch

from agent import ActorCritic
from env import ContextBandit

torch.manual_seed(0)

env = ContextBandit()
agent = ActorCritic(env.obs_dim, env.n_actions)
optimizer = torch.optim.Adam(agent.parameters(), lr=1e-2)

for episode in range(30):
    obs = env.reset()
    for t in range(16):
        action = agent.act(obs)
        obs, reward = env.step(action)
        agent.rewards.append(reward)
    loss = agent.loss()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    agent.clear()

print(f"last loss {loss.item():.4f}")
