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


class AccumulatingOptimizer:
    """Steps and clears the wrapped optimizer once every `every` micro-batches."""

    def __init__(self, optimizer, every):
        self.optimizer, self.every = optimizer, every
        self.micro = 0

    @property
    def sync(self):
        return self.micro % self.every == 0

    def backward_done(self):
        self.micro += 1

    def step(self):
        if self.sync:
            self.optimizer.step()

    def zero_grad(self, set_to_none=True):
        if self.sync:
            self.optimizer.zero_grad(set_to_none=set_to_none)
