import torch


class ContextBandit:
    """A one-step-per-action toy task: the right action is the argmax of the observation."""

    obs_dim = 4
    n_actions = 4

    def __init__(self):
        self.obs = torch.randn(self.obs_dim)

    def reset(self):
        self.obs = torch.randn(self.obs_dim)
        return self.obs

    def step(self, action):
        reward = 1.0 if action == int(self.obs.argmax()) else 0.0
        self.obs = torch.randn(self.obs_dim)
        return self.obs, reward
