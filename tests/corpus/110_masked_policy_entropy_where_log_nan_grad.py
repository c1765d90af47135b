"""Case 110 - action-masked policy entropy via torch.where(p > 0, p * log p, 0) -> NaN gradients

Source: https://github.com/pytorch/pytorch/issues/31829
        "Improve gradient stability of logsumexp, softmax, log_softmax, logsigmoid at -inf
        (replace nan by zero)" (the entropy `torch.where(mask, p * p.log(), 0)` still gives
        NaN gradients: "we have no way to differentiate a 0 that comes from unused from a 0
        that comes from it is numerically 0")
Category: nan-in-backward

Reported symptom:
    PPO-style update with action masking and an entropy bonus: the loss is finite, but the
    policy gradients are NaN and the weights become NaN after the step.

Root cause:
    Illegal actions get logit -inf, so their probability is exactly 0.  The entropy takes
    probs.log() for every action (-inf at the illegal ones) and relies on torch.where to
    drop those terms.  In backward WhereBackward0 sends 0 into the unselected branch;
    MulBackward0 computes 0 * log(0) = 0 * -inf = NaN and LogBackward0 computes 0 / 0 = NaN.
    SoftmaxBackward0 mixes the NaN into the whole row, so every logit, and every weight of
    the policy head and trunk, gets a NaN gradient.

Ground truth a good tool should report:
    Forward: -inf (log of exact 0) and NaN (0 * -inf) appear in the unselected branch of the
    torch.where at line 58 but not in its output.  Backward: the first NaN is produced by
    MulBackward0 / LogBackward0 of line 58; it reaches policy.net.2.weight.grad.  Fix: log of
    a safe value (torch.where(p > 0, p, 1).log()), or log_softmax with the -inf entries
    masked before multiplying.
    EXPECT: kind=nan_backward; nan_node=MulBackward0; nan_node_line=58; cause_line=58;
            affected=net.2.weight.grad

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        loss = 0.7446416020393372 (finite)
        policy.net[2].weight.grad has NaN: True
        policy weights NaN after step: True
"""
import torch
import torch.nn as nn

torch.manual_seed(0)
n_actions = 5


class MaskedPolicy(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, n_actions))
        self.value = nn.Linear(8, 1)

    def forward(self, obs, legal):
        logits = self.net(obs).masked_fill(~legal, float("-inf"))  # illegal moves get probability 0
        return logits.softmax(dim=-1), self.value(obs).squeeze(-1)


def entropy(probs):
    # "0 * log 0 = 0": only count the legal actions
    return -torch.where(probs > 0, probs * probs.log(), torch.zeros_like(probs)).sum(-1)  # <- CAUSE,NAN: log(0) = -inf in the unselected branch; backward 0 * inf = nan


policy = MaskedPolicy()
opt = torch.optim.Adam(policy.parameters(), lr=3e-4)
obs = torch.randn(6, 8)
legal = torch.rand(6, n_actions) > 0.3
legal[:, 0] = True  # "no-op" is always legal
actions = torch.multinomial(legal.float(), 1).squeeze(1)
advantages = torch.randn(6)
returns = torch.randn(6)

probs, values = policy(obs, legal)
logp = torch.log(probs.gather(1, actions[:, None]).squeeze(1))
loss = -(logp * advantages).mean() + 0.5 * (values - returns).pow(2).mean() - 0.01 * entropy(probs).mean()
print("loss =", loss.item(), "(finite)")
opt.zero_grad()
loss.backward()
print("policy.net[2].weight.grad has NaN:", torch.isnan(policy.net[2].weight.grad).any().item())
opt.step()
print("policy weights NaN after step:", torch.isnan(policy.net[0].weight).any().item())
