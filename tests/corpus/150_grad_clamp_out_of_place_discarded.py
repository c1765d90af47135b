"""Case 150 - DQN gradient clipping with out-of-place clamp(): the result is thrown away

Source: https://github.com/pytorch/tutorials/pull/30 "Fixed clamp not being applied to
        parameters" (reinforcement_q_learning tutorial: "the line
        `param.grad.data.clamp(-1, 1)` has no effect. I guess you wanted to do it
        in-place, which is `clamp_`"; author: "Yeah, my bad")
Category: work that is thrown away (out-of-place op used as a statement)

Reported symptom:
    No error.  Gradient value clipping does nothing; large TD errors produce
    gradients far outside [-1, 1] and the Q-network is unstable.

Root cause:
    `Tensor.clamp` returns a new tensor; as a bare statement its result is discarded
    and `param.grad` is unchanged.  The in-place `clamp_` (or
    torch.nn.utils.clip_grad_value_) was meant.

Ground truth a good tool should report:
    The result of `param.grad.data.clamp(-1, 1)` at line 66 is never used: an
    out-of-place op whose output is discarded, on a tensor (`.grad`) that is read
    unchanged by `optimizer.step()` at line 67.  Fix: `clamp_`.
    EXPECT: kind=discarded_out_of_place; cause_line=66; read_line=67

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        update 0: max |grad| seen by optimizer.step() = 10.21 (clip range [-1, 1])
        update 1: max |grad| seen by optimizer.step() = 7.087 (clip range [-1, 1])
        update 2: max |grad| seen by optimizer.step() = 9.325 (clip range [-1, 1])
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

N_OBS, N_ACTIONS, GAMMA = 4, 2, 0.99


def make_q_net():
    return nn.Sequential(nn.Linear(N_OBS, 32), nn.ReLU(), nn.Linear(32, N_ACTIONS))


policy_net = make_q_net()
target_net = make_q_net()
target_net.load_state_dict(policy_net.state_dict())
optimizer = torch.optim.RMSprop(policy_net.parameters(), lr=1e-3)

for update in range(3):
    # a replay batch with large rewards (e.g. an unnormalised reward scale)
    state = torch.randn(32, N_OBS)
    action = torch.randint(0, N_ACTIONS, (32, 1))
    reward = torch.randn(32) * 20
    next_state = torch.randn(32, N_OBS)
    done = torch.rand(32) < 0.1

    q_sa = policy_net(state).gather(1, action).squeeze(1)
    with torch.no_grad():
        next_q = target_net(next_state).max(1).values
        target = reward + GAMMA * next_q * (~done)
    loss = F.mse_loss(q_sa, target)

    optimizer.zero_grad()
    loss.backward()
    for param in policy_net.parameters():
        param.grad.data.clamp(-1, 1)  # <- CAUSE: out-of-place; the clamped copy is discarded
    optimizer.step()  # <- READ: uses the unclipped gradient
    worst = max(p.grad.abs().max().item() for p in policy_net.parameters())
    print(f"update {update}: max |grad| seen by optimizer.step() = {worst:.4g} (clip range [-1, 1])")
