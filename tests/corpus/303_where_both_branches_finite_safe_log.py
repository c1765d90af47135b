"""Correct 303 - torch.where with both branches finite (safe log, clamped expm1, Huber)

Category: correct (numerics: torch.where)
What it is:
    An actor-critic update with action masking.  Every torch.where in it has two finite
    branches: the entropy takes the log of torch.where(p > 0, p, 1) (the "double where"),
    the ELU-like activation clamps the exp branch's input to <= 0, and the Huber value loss
    is a where of two polynomials.  Illegal actions get a large finite negative logit
    (probability exactly 0) and are never the logged action.
Why a naive tool might flag it:
    torch.where next to log/exp and exact-zero probabilities is the textbook
    NaN-in-backward pattern; here the unselected branches are finite, so the gradients are.
Ground truth a good tool should report:
    EXPECT: no findings (correct training code: torch.where with finite branches)

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        step 0: loss 0.7026, illegal prob mass 0.0e+00
        step 1: loss 0.6334, illegal prob mass 0.0e+00
        step 2: loss 0.5636, illegal prob mass 0.0e+00
        step 3: loss 0.4933, illegal prob mass 0.0e+00
        grads finite: True
"""
import torch
import torch.nn as nn

torch.manual_seed(0)
n_actions = 6


def safe_elu(x):
    # the exp branch only ever sees non-positive inputs, so it cannot overflow
    return torch.where(x > 0, x, torch.expm1(x.clamp(max=0.0)))


class Agent(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(10, 32)
        self.pi = nn.Linear(32, n_actions)
        self.v = nn.Linear(32, 1)

    def forward(self, obs, legal):
        h = safe_elu(self.l1(obs))
        logits = self.pi(h).masked_fill(~legal, -1e9)
        return logits.softmax(-1), self.v(h).squeeze(-1)


def masked_entropy(probs):
    positive = probs > 0
    safe_p = torch.where(positive, probs, torch.ones_like(probs))  # log only ever sees values > 0
    return -torch.where(positive, probs * torch.log(safe_p), torch.zeros_like(probs)).sum(-1)


def huber(diff, beta=1.0):
    a = diff.abs()
    return torch.where(a < beta, 0.5 * diff ** 2 / beta, a - 0.5 * beta)


agent = Agent()
opt = torch.optim.Adam(agent.parameters(), lr=1e-3)
obs = torch.randn(12, 10) * 5.0
legal = torch.rand(12, n_actions) > 0.4
legal[:, 0] = True
actions = torch.multinomial(legal.float(), 1).squeeze(1)
advantages, returns = torch.randn(12), torch.randn(12) * 3.0

for step in range(4):
    probs, values = agent(obs, legal)
    logp = probs.gather(1, actions[:, None]).squeeze(1).log()
    loss = (-(logp * advantages).mean() + 0.5 * huber(values - returns).mean()
            - 0.01 * masked_entropy(probs).mean())
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step}: loss {loss.item():.4f}, illegal prob mass {probs[~legal].sum().item():.1e}")
print("grads finite:", all(torch.isfinite(p.grad).all().item() for p in agent.parameters()))
