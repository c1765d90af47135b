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
import torch

from accumulate import AccumulatingOptimizer
from policy import Policy
from ppo import PPOTrainer

torch.manual_seed(0)

obs = torch.randn(512, 12)
actions = torch.randint(0, 4, (512,))
advantages = torch.randn(512)

policy = Policy(12, 4)
optimizer = AccumulatingOptimizer(torch.optim.AdamW(policy.parameters(), lr=1e-3), every=4)
trainer = PPOTrainer(policy, optimizer)

for epoch in range(3):
    loss = trainer.train_epoch(obs, actions, advantages, micro_batch=32)

print(f"final loss {loss:.4f}")
