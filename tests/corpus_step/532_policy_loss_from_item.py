"""Case 532 - REINFORCE loss accumulated from log_prob.item() times the reward

Source: https://github.com/isayev/ReLeaSE/issues/39
        "My weights don't seem to be changing."
Category: 8 - tensors that require grad do not leave autograd silently

Reported symptom:
    The generator's weights do not change during the reinforcement phase; the
    .grad of every layer is None after rl_loss.backward(), although no error is
    raised.

Root cause:
    The policy-gradient loss is accumulated as
    `rl_loss = rl_loss - log_probs[...].item() * reward`. .item() turns the
    log-probability into a Python float, so the loss is a sum of constants
    hanging off a leaf created with requires_grad=True; backward runs fine but
    never reaches the policy network.

Ground truth a good tool should report:
    The loss does not depend on any parameter: the model output leaves autograd
    through `.item()` at the `rl_loss = rl_loss - log_probs[...].item() * reward`
    line, and every parameter's gradient stays None.
"""
import torch
import torch.nn as nn

torch.manual_seed(0)

n_tokens, hidden = 6, 32
policy = nn.Sequential(nn.Linear(n_tokens, hidden), nn.Tanh(), nn.Linear(hidden, n_tokens))
optimizer = torch.optim.Adam(policy.parameters(), lr=1e-2)


def reward_fn(token):
    return 1.0 if token == 3 else -0.2


for episode in range(30):
    state = torch.zeros(1, n_tokens)
    rl_loss = torch.zeros((), requires_grad=True)
    total_reward = 0.0
    for t in range(8):
        log_probs = torch.log_softmax(policy(state), dim=1)
        top_i = torch.multinomial(log_probs.exp(), 1).item()
        reward = reward_fn(top_i)
        total_reward += reward
        rl_loss = rl_loss - log_probs[0, top_i].item() * reward  # <- CAUSE
        state = torch.zeros(1, n_tokens)
        state[0, top_i] = 1.0
    optimizer.zero_grad()
    rl_loss.backward()
    optimizer.step()

print(f"grad of first layer: {policy[0].weight.grad}")
print(f"final loss {rl_loss.item():.4f}  last episode reward {total_reward:.2f}")
