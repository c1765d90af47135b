"""Case 103 - REINFORCE: returns normalised with std() of a one-step episode -> NaN loss and weights

Source: https://github.com/pytorch/pytorch/issues/29372
        "torch.std() returns nan for single item tensors." (np.std(4) is 0, torch.std is NaN
        because of the unbiased n - 1 divisor; "This causes numerical instabilities in certain
        situations")
Category: nan-in-forward

Reported symptom:
    A policy-gradient agent whose episodes can end after one step: the loss of such an
    episode is nan and from then on every parameter is NaN (plus a UserWarning
    "std(): degrees of freedom is <= 0").

Root cause:
    The standard return normalisation (returns - mean) / (returns.std() + eps) divides by the
    unbiased standard deviation.  For an episode of length 1 std() divides by n - 1 = 0 and
    returns NaN; adding eps does not help (nan + eps = nan).  The NaN returns multiply the log
    probabilities, the loss is NaN and Adam writes NaN into every weight.

Ground truth a good tool should report:
    First non-finite value in forward: NaN from `returns.std()` at line 73 (a 1-element
    tensor); the normalised returns and the loss are NaN and reach every gradient of `policy`.
    Fix: std(correction=0), or skip the normalisation when len(returns) < 2.
    EXPECT: kind=nan_forward; first_nan_line=73; nan_op=std; cause_line=73;
            affected=policy.0.weight.grad

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        episode 0: length 1, loss nan, params NaN: True
    stderr:
        UserWarning: std(): degrees of freedom is <= 0. Correction should be strictly less than
        the reduction factor (input numel divided by output numel).
"""
import torch
import torch.nn as nn

torch.manual_seed(0)
gamma, eps = 0.99, 1e-8


class StopOrGo:
    """Toy environment: action 1 moves on (+1 reward), action 0 ends the episode at once."""

    def reset(self):
        self.t = 0
        return torch.randn(4)

    def step(self, action):
        self.t += 1
        done = action == 0 or self.t >= 6
        return torch.randn(4), (0.0 if action == 0 else 1.0), done


policy = nn.Sequential(nn.Linear(4, 32), nn.Tanh(), nn.Linear(32, 2))
opt = torch.optim.Adam(policy.parameters(), lr=1e-2)
env = StopOrGo()

for episode in range(30):
    state, log_probs, rewards, done = env.reset(), [], [], False
    while not done:
        dist = torch.distributions.Categorical(logits=policy(state))
        action = dist.sample()
        log_probs.append(dist.log_prob(action))
        state, reward, done = env.step(action.item())
        rewards.append(reward)

    returns, running = [], 0.0
    for r in reversed(rewards):
        running = r + gamma * running
        returns.insert(0, running)
    returns = torch.tensor(returns)
    returns = (returns - returns.mean()) / (returns.std() + eps)  # <- CAUSE,NAN: std() of a 1-step episode is nan (n-1 = 0)
    loss = -(torch.stack(log_probs) * returns).sum()

    opt.zero_grad()
    loss.backward()
    opt.step()
    bad = any(torch.isnan(p).any().item() for p in policy.parameters())
    print(f"episode {episode}: length {len(rewards)}, loss {loss.item():.4f}, params NaN: {bad}")
    if bad:
        break
