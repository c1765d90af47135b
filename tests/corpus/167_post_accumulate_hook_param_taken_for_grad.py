"""Case 167 - post-accumulate-grad hook treats its argument as the gradient (it is the parameter)

Source: https://github.com/pytorch/pytorch/issues/187268
        "`register_post_accumulate_grad_hook` naming/documentation conflicts with
        `register_hook`, leading to semantic misinterpretation of hook argument and
        silent training bugs" (a CPU-offload optimizer cast the hook argument and
        accumulated it as the gradient: "After thousands of training steps, loss
        completely stagnated"); same confusion in
        https://github.com/huggingface/picotron/issues/39
Category: hooks (wrong hook argument semantics)

Reported symptom:
    No error.  The loss stagnates; the weights shrink towards zero.

Root cause:
    `Tensor.register_hook(fn)` calls `fn(grad)`, but
    `Tensor.register_post_accumulate_grad_hook(fn)` calls `fn(param)` with the
    leaf itself (its gradient is `param.grad`).  The offload hook copies the
    *weights* into the float64 "gradient" accumulator, so every optimizer step
    applies `p -= lr * accum_steps * p` (pure weight decay) and the real
    gradient is thrown away.

Ground truth a good tool should report:
    The post-accumulate-grad hook registered at line 61 reads its argument
    (the parameter, not its gradient) at line 55 and accumulates it as a
    gradient; the values then written to `.grad` at line 73 are the weights.
    Use `param.grad` inside the hook.
    EXPECT: kind=hook_argument_misuse; hook=post_accumulate_grad; cause_line=55

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        offloaded 'gradient' == accum_steps * weight: True
        step  0 loss 5.1307 |W0| 1.8810
        step 10 loss 5.1201 |W0| 0.2020
        step 20 loss 5.1245 |W0| 0.0217
        step 29 loss 5.1250 |W0| 0.0029
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
accum_steps = 4
x = torch.randn(64, 6)
y = x[:, :1] * 2.0 - x[:, 1:2] + 0.1 * torch.randn(64, 1)
host_grads = {}  # float64 gradient accumulators ("offloaded" to host memory)


def make_offload_hook(name):
    def offload(grad):  # called after .grad was accumulated
        host_grads[name] += grad.detach().to(torch.float64)  # <- CAUSE: the argument is the parameter, not its grad
    return offload


for name, p in model.named_parameters():
    host_grads[name] = torch.zeros_like(p, dtype=torch.float64)
    p.register_post_accumulate_grad_hook(make_offload_hook(name))

for step in range(30):
    for micro in range(accum_steps):
        xb, yb = x[micro::accum_steps], y[micro::accum_steps]
        loss = F.mse_loss(model(xb), yb) / accum_steps
        loss.backward()
    if step == 0:
        w = model[0].weight
        print("offloaded 'gradient' == accum_steps * weight:",
              torch.allclose(host_grads["0.weight"].float(), accum_steps * w.detach()))
    for name, p in model.named_parameters():
        p.grad = host_grads[name].to(p.dtype)  # <- READ: the weights, installed as the gradient
        host_grads[name].zero_()
    optimizer.step()
    optimizer.zero_grad()
    if step % 10 == 0 or step == 29:
        full = F.mse_loss(model(x), y).item()
        print(f"step {step:2d} loss {full:.4f} |W0| {model[0].weight.norm():.4f}")
