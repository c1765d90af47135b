"""Case 128 - Gaussian policy chunks its head output into mean / log_std, then clamp_()s log_std

Source: https://github.com/toshikwa/gail-airl-ppo.pytorch/issues/13
        "Questions about in-place operations" (`means, log_stds =
        self.net(states).chunk(2, dim=-1)` then `log_stds.clamp_(-20, 2)` ->
        "Output 1 of SplitBackward0 is a view and is being modified inplace";
        changing clamp_ to clamp fixes it)
Category: view + in-place (multi-output view: chunk/split)

Reported symptom:
    RuntimeError: Output 1 of SplitBackward0 is a view and is being modified
    inplace. This view is the output of a function that returns multiple views.
    Such functions do not allow the output views to be modified inplace. You
    should replace the inplace operation by an out-of-place one.

Root cause:
    Tensor.chunk returns views of the policy head's output produced by one
    multi-output autograd node (SplitBackward0).  Autograd cannot rebase the
    history of one output of such a node, so any in-place op on those views is
    rejected; clamp_ on `log_std` raises in the forward pass.  Use the
    out-of-place `log_std = log_std.clamp(-20, 2)`.

Ground truth a good tool should report:
    `log_std` is output 1 of SplitBackward0 (`.chunk(2, dim=-1)` at line 55)
    and `log_std.clamp_(-20, 2)` at line 56 modifies it in place.
    EXPECT: kind=view_inplace_multi_output; tensor=log_std; node=SplitBackward0;
            created_line=55; cause_line=56; error_line=56

Observed (torch 2.13.0, CPU, this script):
    exit code: 1
    exception:
        RuntimeError: Output 1 of Split is a view and is being modified inplace. This
          view is the output of a function that returns multiple views. Such
          functions do not allow the output views to be modified inplace. You
          should replace the inplace operation by an out-of-place one.
"""
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


class SquashedGaussianPolicy(nn.Module):
    def __init__(self, obs_dim=11, act_dim=3, hidden=64):
        super().__init__()
        self.body = nn.Sequential(
            nn.Linear(obs_dim, hidden), nn.Tanh(),
            nn.Linear(hidden, hidden), nn.Tanh(),
            nn.Linear(hidden, 2 * act_dim),
        )

    def forward(self, obs):
        mean, log_std = self.body(obs).chunk(2, dim=-1)  # <- CREATED
        log_std.clamp_(-20, 2)  # <- CAUSE,ERROR: in-place on an output of SplitBackward0
        std = log_std.exp()
        noise = torch.randn_like(mean)
        pre_tanh = mean + std * noise
        action = torch.tanh(pre_tanh)
        log_prob = (-0.5 * noise.pow(2) - log_std - 0.5 * math.log(2 * math.pi)).sum(-1)
        log_prob = log_prob - torch.log(1 - action.pow(2) + 1e-6).sum(-1)
        return action, log_prob


policy = SquashedGaussianPolicy()
q_net = nn.Sequential(nn.Linear(11 + 3, 64), nn.ReLU(), nn.Linear(64, 1))
optimizer = torch.optim.Adam(policy.parameters(), lr=3e-4)
alpha = 0.2

for update in range(2):
    obs = torch.randn(32, 11)
    action, log_prob = policy(obs)
    q = q_net(torch.cat([obs, action], dim=-1)).squeeze(-1)
    actor_loss = (alpha * log_prob - q).mean()
    optimizer.zero_grad()
    actor_loss.backward()
    optimizer.step()
print("actor updated (bug not reproduced)")
