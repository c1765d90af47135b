"""Case 210 - REINFORCE loss built from log_prob.item(): the policy gradient is a
constant and the generator never updates

Source: https://github.com/isayev/ReLeaSE/issues/39 "Weights are not updating"
        (the reporter changed `rl_loss -= log_probs[0, top_i] * discounted_reward` to
        use `.cpu().detach().numpy()` / `.item()` to silence a device error; every
        layer's grad became None.  Maintainer: "your changes detach rl_loss from the
        computational graph and there is nothing to backpropagate").
Category: graph-cut (silent: .item() in the loss)

Reported symptom:
    No error; "I printed out the grad for each of the layers and it comes back as
    none" and optimizer.step() leaves the weights unchanged.

Root cause:
    `log_probs[0, top_i].item()` turns the log-probability into a Python float, so
    rl_loss is a plain number.  To make `.backward()` callable it is then wrapped in
    `torch.tensor(..., requires_grad=True)`, a fresh leaf that is not connected to
    the generator: backward only fills rl_loss.grad.

Ground truth a good tool should report:
    `rl_loss` is a leaf created by torch.tensor(...) with requires_grad=True; it has
    no path to any generator parameter (all .grad None after backward).  The graph
    is cut at `.item()` on the log-probability.
    EXPECT: kind=dead_loss; tensor=rl_loss; cause_line=81,84; read_line=86

Observed (torch 2.13, CPU):
    exit code: 0
    stdout:
        iter 0: rl_loss=1.764 mean reward=0.675
        parameters with grad after backward: 0 of 7
        iter 1: rl_loss=7.869 mean reward=0.600
        iter 2: rl_loss=6.714 mean reward=0.425
        generator weights changed after 3 policy-gradient steps: False
"""
import torch
import torch.nn as nn

torch.manual_seed(0)
VOCAB, HIDDEN, MAX_LEN = 12, 32, 10
START, END = 0, 1


class StackRNNGenerator(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, HIDDEN)
        self.cell = nn.GRUCell(HIDDEN, HIDDEN)
        self.out = nn.Linear(HIDDEN, VOCAB)

    def step(self, token, h):
        h = self.cell(self.embed(token), h)
        return torch.log_softmax(self.out(h), dim=-1), h


def reward_fn(tokens):
    """Toy property predictor: favour molecules rich in token 5."""
    return 1.0 + tokens.count(5) - 0.1 * len(tokens)


generator = StackRNNGenerator()
optimizer = torch.optim.Adam(generator.parameters(), lr=1e-3)
before = [p.detach().clone() for p in generator.parameters()]
gamma, n_batch = 0.97, 4

for it in range(3):
    rl_loss, total_reward = 0.0, 0.0
    for _ in range(n_batch):
        h, token, trajectory, logps = torch.zeros(1, HIDDEN), torch.tensor([START]), [], []
        for _ in range(MAX_LEN):
            log_probs, h = generator.step(token, h)
            top_i = torch.multinomial(log_probs.exp(), 1).item()
            trajectory.append(top_i)
            logps.append((log_probs, top_i))
            token = torch.tensor([top_i])
            if top_i == END:
                break
        discounted_reward = reward_fn(trajectory)
        total_reward += discounted_reward
        for log_probs, top_i in reversed(logps):
            rl_loss -= log_probs[0, top_i].item() * discounted_reward  # <- CAUSE: .item() leaves the graph
            discounted_reward *= gamma
    optimizer.zero_grad()
    rl_loss = torch.tensor(rl_loss / n_batch, requires_grad=True)  # <- CAUSE: new leaf, no link to the generator
    rl_loss.backward()
    optimizer.step()  # <- READ
    print(f"iter {it}: rl_loss={rl_loss.item():.3f} mean reward={total_reward / n_batch:.3f}")
    if it == 0:
        n_with_grad = sum(p.grad is not None for p in generator.parameters())
        print(f"parameters with grad after backward: {n_with_grad} of {len(before)}")

changed = any(not torch.equal(b, p) for b, p in zip(before, generator.parameters()))
print("generator weights changed after 3 policy-gradient steps:", changed)
