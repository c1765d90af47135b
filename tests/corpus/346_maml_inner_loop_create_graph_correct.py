"""Correct 346 - MAML on sine regression: inner-loop autograd.grad(create_graph=True)

Source: the second-order MAML inner loop (Finn et al. 2017), functional form as in
        https://pytorch.org/tutorials/intermediate/torch_func_tutorial.html style
        torch.func.functional_call; contrast with the first-order bug of
        https://github.com/facebookresearch/DomainBed/issues/50
Category: correct script (higher-order gradients, functional parameters)

What it does:
    For each task: two inner SGD steps on the support set with fast weights
    `w - inner_lr * g`, where g = autograd.grad(..., create_graph=True), so the
    query loss is differentiable through the adaptation w.r.t. the meta-parameters.
    The meta-gradient is accumulated over a batch of tasks (mean of query losses)
    and applied with one meta-optimizer step.  The parameters are never modified in
    place during the inner loop.

Ground truth a good tool should report:
    EXPECT: no findings

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        meta-iter 0: query loss 7.2968
        meta-iter 4: query loss 3.8642
        meta-iter 9: query loss 5.1712
"""
import math

import torch
import torch.nn as nn
from torch.func import functional_call

torch.manual_seed(0)

net = nn.Sequential(nn.Linear(1, 40), nn.ReLU(), nn.Linear(40, 40), nn.ReLU(), nn.Linear(40, 1))
meta_opt = torch.optim.Adam(net.parameters(), lr=1e-2)
inner_lr, inner_steps, tasks_per_batch = 0.01, 2, 4


def sample_task():
    amp, phase = 0.1 + 4.9 * torch.rand(1).item(), math.pi * torch.rand(1).item()

    def draw(n):
        x = torch.rand(n, 1) * 10 - 5
        return x, amp * torch.sin(x + phase)

    return draw


def adapt(params, x, y):
    for _ in range(inner_steps):
        loss = ((functional_call(net, params, (x,)) - y) ** 2).mean()
        grads = torch.autograd.grad(loss, list(params.values()), create_graph=True)
        params = {name: w - inner_lr * g for (name, w), g in zip(params.items(), grads)}
    return params


for meta_iter in range(10):
    meta_opt.zero_grad()
    meta_loss = 0.0
    for _ in range(tasks_per_batch):
        draw = sample_task()
        x_s, y_s = draw(10)
        x_q, y_q = draw(10)
        fast = adapt(dict(net.named_parameters()), x_s, y_s)
        meta_loss = meta_loss + ((functional_call(net, fast, (x_q,)) - y_q) ** 2).mean()
    meta_loss = meta_loss / tasks_per_batch
    meta_loss.backward()
    meta_opt.step()
    if meta_iter in (0, 4, 9):
        print(f"meta-iter {meta_iter}: query loss {meta_loss.item():.4f}")
