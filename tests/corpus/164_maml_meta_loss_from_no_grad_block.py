"""Case 164 - MAML: with one inner step the meta-loss is the one logged under torch.no_grad()

Source: https://github.com/dragen1860/MAML-Pytorch/issues/40
        "questions with respect to the no_grad()": with the number of inner
        updates set to 1, "RuntimeError: element 0 of tensors does not require
        grad and does not have a grad_fn" -- the query loss after the first update
        is computed inside `with torch.no_grad():` and, when the inner loop
        `for k in range(1, update_step)` is empty, it is the loss back-propagated.
Category: grad-mode (forward run under no_grad)

Reported symptom:
    RuntimeError: element 0 of tensors does not require grad and does not
    have a grad_fn   (only for update_step == 1; larger values train).

Root cause:
    The query losses before and after the first adaptation step are meant for
    logging and are computed in `with torch.no_grad():` blocks.  The meta-loss
    is `losses_q[-1]`; with `inner_steps = 1` the loop that computes the
    differentiable query losses never runs, so `losses_q[-1]` is the value
    produced under no_grad: it has no grad_fn and backward fails.

Ground truth a good tool should report:
    `meta_loss` (line 87) has no history because the query loss it is built from was
    computed (line 79) while grad mode was disabled by the `with torch.no_grad():`
    at line 78; backward at line 91 fails.  Compute the post-update query loss
    with grad enabled.
    EXPECT: kind=backward_no_graph; cause_line=78; created_line=79;
            error_line=91

Observed (torch 2.13.0, CPU, this script):
    exit code: 1
    stdout:
        meta-iter 0: query loss before 0.765, after 0.778, requires_grad=False
    stderr (last line):
        RuntimeError: element 0 of tensors does not require grad and does not have a
          grad_fn
"""
import math
import torch
import torch.nn.functional as F

torch.manual_seed(0)


def init_params(hidden=32):
    w1 = torch.randn(hidden, 1) * 0.5
    w2 = torch.randn(1, hidden) / math.sqrt(hidden)
    return [t.requires_grad_() for t in (w1, torch.zeros(hidden), w2, torch.zeros(1))]


def mlp(x, params):
    w1, b1, w2, b2 = params
    return F.linear(torch.tanh(F.linear(x, w1, b1)), w2, b2)


def sample_task(n=10):
    amplitude = torch.empty(1).uniform_(0.5, 2.0)
    phase = torch.empty(1).uniform_(0, math.pi)
    xs = torch.empty(2 * n, 1).uniform_(-5, 5)
    ys = amplitude * torch.sin(xs + phase)
    return xs[:n], ys[:n], xs[n:], ys[n:]


meta_params = init_params()
meta_opt = torch.optim.Adam(meta_params, lr=1e-3)
inner_lr, inner_steps, tasks_per_batch = 0.01, 1, 4

for meta_iter in range(3):
    losses_q = [0.0 for _ in range(inner_steps + 1)]
    for _ in range(tasks_per_batch):
        x_s, y_s, x_q, y_q = sample_task()
        support_loss = F.mse_loss(mlp(x_s, meta_params), y_s)
        grads = torch.autograd.grad(support_loss, meta_params, create_graph=True)
        fast = [p - inner_lr * g for p, g in zip(meta_params, grads)]

        with torch.no_grad():  # query loss before adaptation, for the log
            losses_q[0] = losses_q[0] + F.mse_loss(mlp(x_q, meta_params), y_q)
        with torch.no_grad():  # <- CAUSE: query loss after the first update, later used as meta-loss
            losses_q[1] = losses_q[1] + F.mse_loss(mlp(x_q, fast), y_q)  # <- CREATED: no grad_fn

        for k in range(1, inner_steps):  # empty when inner_steps == 1
            support_loss = F.mse_loss(mlp(x_s, fast), y_s)
            grads = torch.autograd.grad(support_loss, fast, create_graph=True)
            fast = [p - inner_lr * g for p, g in zip(fast, grads)]
            losses_q[k + 1] = losses_q[k + 1] + F.mse_loss(mlp(x_q, fast), y_q)

    meta_loss = losses_q[-1] / tasks_per_batch
    print(f"meta-iter {meta_iter}: query loss before {losses_q[0].item() / tasks_per_batch:.3f}, "
          f"after {meta_loss.item():.3f}, requires_grad={meta_loss.requires_grad}")
    meta_opt.zero_grad()
    meta_loss.backward()  # <- ERROR: element 0 of tensors does not require grad
    meta_opt.step()
