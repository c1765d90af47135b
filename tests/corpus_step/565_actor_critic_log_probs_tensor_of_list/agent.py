import torch
import torch.nn as nn
import torch.nn.functional as F


class ActorCritic(nn.Module):
    def __init__(self, obs_dim, n_actions, hidden=32, gamma=0.95):
        super().__init__()
        self.actor = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(), nn.Linear(hidden, n_actions))
        self.critic = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(), nn.Linear(hidden, 1))
        self.gamma = gamma
        self.clear()

    def clear(self):
        self.log_probs, self.values, self.rewards = [], [], []

    def act(self, obs):
        dist = torch.distributions.Categorical(logits=self.actor(obs))
        action = dist.sample()
        self.log_probs.append(dist.log_prob(action))
        self.values.append(self.critic(obs).squeeze(-1))
        return action.item()

    def returns(self):
        out, running = [], 0.0
        for r in reversed(self.rewards):
            running = r + self.gamma * running
            out.append(running)
        return torch.tensor(out[::-1])

    def loss(self):
        returns = self.returns()
        values = torch.stack(self.values)
        log_probs = torch.tensor(self.log_probs)  # <- CAUSE
        advantages = returns - values.detach()
        policy_loss = -(log_probs * advantages).mean()
        value_loss = F.mse_loss(values, returns)
        return policy_loss + 0.5 * value_loss
