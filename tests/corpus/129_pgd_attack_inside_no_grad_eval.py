"""Case 129 - robust-accuracy evaluation runs a gradient-based attack inside torch.no_grad()

Source: https://github.com/BorealisAI/advertorch/issues/79
        "Adversarial training works well but Attacking the Network throws errors"
        (`with torch.no_grad(): ... adversary.perturb(inputs, targets)` ->
        "RuntimeError: element 0 of tensors does not require grad and does not
        have a grad_fn"; maintainer: "removing `with torch.no_grad()` would
        probably make it work")
Category: graph disabled by a caller's no_grad -> no grad_fn

Reported symptom:
    RuntimeError: element 0 of tensors does not require grad and does not have
    a grad_fn  (raised inside the attack's loss.backward())

Root cause:
    The evaluation loop wraps the whole batch loop in `torch.no_grad()` (as
    every evaluation snippet does).  The PGD attack called inside it needs the
    gradient of the loss w.r.t. the perturbation; `delta` requires grad, but
    no graph is recorded under no_grad, so the attack's loss has no grad_fn
    and its backward fails.  The attack itself is correct: the no_grad block
    must enclose only the final clean/adversarial predictions (or the attack
    must re-enable grad with torch.enable_grad()).

Ground truth a good tool should report:
    `loss` at line 60 (backward) has no grad_fn: it was computed at line 59
    while grad mode was disabled by the `with torch.no_grad():` at line 79
    in the caller (attack called at line 82, the other fair fix:
    `with torch.enable_grad():` around it).  `delta` requires grad but
    nothing was recorded.
    EXPECT: kind=no_grad_fn_loss; tensor=loss; grad_mode_off_line=79;
            cause_line=79,82; error_line=60

Observed (torch 2.13.0, CPU, this script):
    exit code: 1
    stdout:
        clean training done, final loss 0.17
    exception:
        RuntimeError: element 0 of tensors does not require grad and does not have
          a grad_fn
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

net = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 4))
centers = torch.randn(4, 20)


def make_batch(n=32):
    y = torch.randint(0, 4, (n,))
    return centers[y] + 1.2 * torch.randn(n, 20), y


def pgd_attack(model, x, y, eps=0.3, alpha=0.1, steps=5):
    delta = torch.zeros_like(x).uniform_(-eps, eps).requires_grad_(True)
    for _ in range(steps):
        loss = F.cross_entropy(model(x + delta), y)  # <- CREATED: no grad_fn under the caller's no_grad
        loss.backward()  # <- ERROR
        with torch.no_grad():
            delta += alpha * delta.grad.sign()
            delta.clamp_(-eps, eps)
        delta.grad = None
    return (x + delta).detach()


optimizer = torch.optim.Adam(net.parameters(), lr=1e-2)
for step in range(30):
    xb, yb = make_batch()
    loss = F.cross_entropy(net(xb), yb)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f"clean training done, final loss {loss.item():.2f}")

net.eval()
correct_clean = correct_adv = total = 0
with torch.no_grad():  # <- CAUSE: disables the graph the attack needs
    for _ in range(3):
        xb, yb = make_batch()
        x_adv = pgd_attack(net, xb, yb)  # <- CAUSE: (or) run the attack under torch.enable_grad()
        correct_clean += (net(xb).argmax(1) == yb).sum().item()
        correct_adv += (net(x_adv).argmax(1) == yb).sum().item()
        total += len(yb)
print(f"clean acc {correct_clean / total:.2f}, robust acc {correct_adv / total:.2f}")
