"""Case 569 - policy-gradient loss accumulated from log_prob.item()

Source: https://github.com/isayev/ReLeaSE/issues/39
        "I printed out the grad for each of the layers and it comes back as none"
Category: 8 - tensors that require grad do not leave autograd silently

Reported symptom:
    After changing one line of the reinforcement step (to get around a
    "can't convert cuda tensor to numpy" error), the generator's weights stop
    changing: every layer's .grad is None after backward(), and optimizer.step()
    does nothing. No error is raised.

Root cause:
    The REINFORCE loss is accumulated term by term from
    log_probs[0, i].item() * discounted_reward. .item() turns the
    log-probability into a Python float, so each term is a constant; the
    accumulator starts as a tensor that requires grad, so backward() runs and
    fills only that tensor's gradient. The generator is never reached.

Ground truth a good tool should report:
    The generator's parameters got no gradient: the log-probability left autograd
    at `.item()` in reinforcement.py (keep the tensor: log_probs[0, top_i] * reward).
"""
import torch

from generator import CharGenerator
from reinforcement import Reinforcement

torch.manual_seed(0)

vocab = 12
generator = CharGenerator(vocab)
optimizer = torch.optim.Adam(generator.parameters(), lr=1e-3)


def reward_fn(sequence):
    return sum(1.0 for token in sequence if token < 4) / len(sequence)


rl = Reinforcement(generator, optimizer, reward_fn)
for iteration in range(10):
    loss = rl.policy_gradient(n_batch=4, length=10)

print(f"last rl loss {loss:.4f}")
