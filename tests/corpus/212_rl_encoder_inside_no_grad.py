"""Case 212 - pixel-based RL agent encodes the current observation inside torch.no_grad():
the CNN encoder has its own optimizer but never learns

Source: https://github.com/rll-research/cic/issues/5 "No gradient through the cnn
        encoder" ("the observations are encoded inside torch.no_grad which means that
        there is no gradient calculation for the CNN, which means that the CNN
        weights will not be updated during pre-training").
Category: graph-cut (silent: no_grad around a part that should learn)

Reported symptom:
    No error.  The encoder weights are identical before and after training although
    encoder_opt.step() is called every update.

Root cause:
    Only the *next* observation (used for the TD target) should be encoded without
    gradient.  The `with torch.no_grad():` block also covers the encoding of the
    current observation, so the critic loss has no path to the encoder: its
    parameters get no .grad and Adam skips them.

Ground truth a good tool should report:
    encoder.convnet.* are in `encoder_opt` but receive no gradient (grad None after
    critic_loss.backward()); the encoder output `obs` consumed by the critic was
    produced under the torch.no_grad() block.  Fix: encode `obs` outside no_grad.
    EXPECT: kind=no_grad_cut; params=encoder.*; cause_line=75; created_line=76;
            read_line=86

Observed (torch 2.13, CPU):
    exit code: 0
    stdout:
        update 0: critic_loss=0.2848
        update 1: critic_loss=0.3935
        update 2: critic_loss=0.3743
        encoder grad after backward: None
        encoder weights changed after 3 updates: False
        critic weights changed after 3 updates: True
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.convnet = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2), nn.ReLU(),
                                     nn.Conv2d(8, 8, 3, stride=1), nn.ReLU(), nn.Flatten())
        self.repr_dim = 8 * 5 * 5

    def forward(self, obs):
        return self.convnet(obs / 255.0 - 0.5)


class Critic(nn.Module):
    def __init__(self, repr_dim, action_dim):
        super().__init__()
        self.q = nn.Sequential(nn.Linear(repr_dim + action_dim, 64), nn.ReLU(), nn.Linear(64, 1))

    def forward(self, h, action):
        return self.q(torch.cat([h, action], dim=1))


class Agent:
    def __init__(self, action_dim=2, discount=0.99):
        self.encoder = Encoder()
        self.critic = Critic(self.encoder.repr_dim, action_dim)
        self.critic_target = Critic(self.encoder.repr_dim, action_dim)
        self.critic_target.load_state_dict(self.critic.state_dict())
        self.encoder_opt = torch.optim.Adam(self.encoder.parameters(), lr=1e-3)
        self.critic_opt = torch.optim.Adam(self.critic.parameters(), lr=1e-3)
        self.discount = discount

    def update(self, obs, action, reward, next_obs):
        with torch.no_grad():  # <- CAUSE: also wraps the encoding of the current obs
            obs = self.encoder(obs)  # <- CREATED
            next_obs = self.encoder(next_obs)
            next_action = torch.tanh(torch.randn_like(action))
            target_q = reward + self.discount * self.critic_target(next_obs, next_action)
        critic_loss = F.mse_loss(self.critic(obs, action), target_q)
        self.encoder_opt.zero_grad()
        self.critic_opt.zero_grad()
        critic_loss.backward()
        grad = self.encoder.convnet[0].weight.grad
        self.critic_opt.step()
        self.encoder_opt.step()  # <- READ
        return critic_loss.item(), grad


agent = Agent()
enc0 = [p.detach().clone() for p in agent.encoder.parameters()]
crit0 = [p.detach().clone() for p in agent.critic.parameters()]
for i in range(3):
    obs = torch.randint(0, 256, (16, 3, 15, 15)).float()
    next_obs = torch.randint(0, 256, (16, 3, 15, 15)).float()
    action, reward = torch.tanh(torch.randn(16, 2)), torch.rand(16, 1)
    loss, grad = agent.update(obs, action, reward, next_obs)
    print(f"update {i}: critic_loss={loss:.4f}")
print("encoder grad after backward:", grad)
print("encoder weights changed after 3 updates:",
      any(not torch.equal(a, b) for a, b in zip(enc0, agent.encoder.parameters())))
print("critic weights changed after 3 updates:",
      any(not torch.equal(a, b) for a, b in zip(crit0, agent.critic.parameters())))
