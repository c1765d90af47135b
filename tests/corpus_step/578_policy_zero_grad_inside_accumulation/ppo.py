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
import torch.nn.functional as F


class PPOTrainer:
    def __init__(self, policy, optimizer):
        self.policy, self.optimizer = policy, optimizer

    def train_epoch(self, obs, actions, advantages, micro_batch):
        total = 0.0
        for start in range(0, len(obs), micro_batch):
            sl = slice(start, start + micro_batch)
            self.policy.zero_grad(set_to_none=True)  # <- CAUSE
            logp = F.log_softmax(self.policy(obs[sl]), dim=-1)
            chosen = logp.gather(1, actions[sl, None]).squeeze(1)
            loss = -(chosen * advantages[sl]).mean() / self.optimizer.every
            loss.backward()
            self.optimizer.backward_done()
            self.optimizer.step()
            total += loss.item()
        return total
