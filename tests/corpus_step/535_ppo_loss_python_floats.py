"""Case 535 - clipped PPO objective assembled from Python floats

Source: https://github.com/Kostis-S-Z/exploring_meta/issues/16
        "Loss in PPO2 needs to be manually set to 'requires_grad=True'"
Category: 8 - tensors that require grad do not leave autograd silently

Reported symptom:
    The PPO update raised "element 0 of tensors does not require grad"; after the
    loss was manually set to requires_grad=True the code runs, but the policy
    never improves and the loss curve is just noise.

Root cause:
    The clipped surrogate is computed per sample with float() and Python's
    min()/max(), then packed into torch.tensor(...). float() copies the ratio out
    of autograd, so the surrogate is a constant; requires_grad_() on the rebuilt
    loss turns it into a leaf and backward reaches no parameter.

Ground truth a good tool should report:
    The policy loss does not depend on the policy parameters (all .grad None);
    the ratio leaves autograd via float() at the `ratio = float(...)` line, and the
    loss rebuilt from Python numbers is only made to look differentiable by
    requires_grad_().
"""
import torch
import torch.nn as nn

torch.manual_seed(0)

obs_dim, n_actions, clip = 4, 3, 0.2
policy = nn.Sequential(nn.Linear(obs_dim, 32), nn.Tanh(), nn.Linear(32, n_actions))
optimizer = torch.optim.Adam(policy.parameters(), lr=3e-3)

obs = torch.randn(256, obs_dim)
with torch.no_grad():
    old_logp_all = torch.log_softmax(policy(obs), 1)
actions = torch.randint(0, n_actions, (256,))
old_logp = old_logp_all[torch.arange(256), actions]
advantages = (actions == obs[:, :3].argmax(1)).float() * 2 - 1

for epoch in range(20):
    idx = torch.randint(0, 256, (64,))
    logp = torch.log_softmax(policy(obs[idx]), 1)[torch.arange(64), actions[idx]]
    surrogate = []
    for i in range(64):
        ratio = float(torch.exp(logp[i] - old_logp[idx][i]))  # <- CAUSE
        adv = float(advantages[idx][i])
        surrogate.append(min(ratio * adv, max(min(ratio, 1 + clip), 1 - clip) * adv))
    loss = -torch.tensor(surrogate).mean()
    loss.requires_grad_()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

print(f"policy grad is None: {policy[0].weight.grad is None}")
print(f"final loss {loss.item():.4f}")
