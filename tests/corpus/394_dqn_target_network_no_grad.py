"""Clean 394 - DQN update: TD target from a target network under torch.no_grad(),
periodic hard sync with load_state_dict

What it does:
    Online Q-network trained with the Huber TD loss on a replay batch.  The target
    max_a' Q_target(s', a') is computed under torch.no_grad(); every 3 updates the
    target network is synchronised with load_state_dict.  The target network has no
    optimizer.

Why it is correct (not a bug):
    The target must be a constant for the TD regression: cutting the graph there is
    the algorithm, not a lost gradient.  The target network's parameters are never
    stepped on purpose (they are copied), and gather()/max() on the online network
    keep the graph for the chosen actions.
    EXPECT: no findings

Observed (torch 2.13, CPU):
    exit code: 0
    stdout:
        update 0: td loss=0.3623
        update 1: td loss=0.3555
        update 2: td loss=0.2957
        update 3: td loss=0.3738
        update 4: td loss=0.4234
        update 5: td loss=0.3679
        update 6: td loss=0.3472
        update 7: td loss=0.5685
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
OBS, N_ACTIONS, GAMMA = 6, 3, 0.99


def make_qnet():
    return nn.Sequential(nn.Linear(OBS, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, N_ACTIONS))


online, target = make_qnet(), make_qnet()
target.load_state_dict(online.state_dict())
target.eval()
optimizer = torch.optim.Adam(online.parameters(), lr=5e-4)

# a small replay buffer
N = 256
states = torch.randn(N, OBS)
actions = torch.randint(0, N_ACTIONS, (N,))
rewards = torch.randn(N)
next_states = states + 0.1 * torch.randn(N, OBS)
dones = (torch.rand(N) < 0.1).float()

for update in range(8):
    idx = torch.randint(0, N, (32,))
    q = online(states[idx]).gather(1, actions[idx].unsqueeze(1)).squeeze(1)
    with torch.no_grad():
        next_q = target(next_states[idx]).max(dim=1).values
        td_target = rewards[idx] + GAMMA * (1.0 - dones[idx]) * next_q
    loss = F.smooth_l1_loss(q, td_target)
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(online.parameters(), 10.0)
    optimizer.step()
    if (update + 1) % 3 == 0:
        target.load_state_dict(online.state_dict())
    print(f"update {update}: td loss={loss.item():.4f}")
