"""Case 578 - the model's zero_grad() clears gradients inside an accumulation window

Source: https://github.com/tatsu-lab/alpaca_farm/issues/57
        "policy.zero_grad is used instead of optimizer.zero_grad"
Category: 3 - a step consumes exactly the gradients meant for it

Reported symptom:
    PPO fine-tuning with gradient accumulation trains, but behaves as if the
    batch were as small as one micro-batch: updates are noisy and the
    configured accumulation has no effect.

Root cause:
    The optimizer is wrapped so that its zero_grad() does nothing until the
    accumulation window is complete. The trainer clears gradients with
    self.policy.zero_grad() instead, which bypasses the wrapper and throws
    away every micro-batch's gradient but the last one before each step.

Ground truth a good tool should report:
    Gradients produced by backward are discarded before any step uses them;
    the culprit is `self.policy.zero_grad(set_to_none=True)` in ppo.py, which
    should be `self.optimizer.zero_grad(set_to_none=True)`.
"""
import torch.nn as nn


class Policy(nn.Module):
    def __init__(self, obs_dim, n_actions):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh())
        self.logits = nn.Linear(64, n_actions)

    def forward(self, obs):
        return self.logits(self.body(obs))
