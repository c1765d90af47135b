"""Case 678 - full backward pre-hook returns a bare tensor instead of a tuple

Source: pytorch/pytorch test/nn/test_module_hooks.py, TestModuleHookNN.test_hook_invalid_outputs (register_full_backward_pre_hook returning a wrong number of grad_output)
Category: module hooks

Reported symptom:
    RuntimeError: Backward pre hook returned an invalid number of grad_output, got 8, but expected 1

Root cause:
    The pre-hook clips the incoming output gradient and returns
    `grad_output[0].clamp(...)`, a single Tensor. Autograd treats the return
    value as the sequence of new grad_outputs and iterates over the tensor's
    first dimension (the batch of 8), which does not match the single output
    of the module. The hook must return a tuple: `(clipped,)`.

Ground truth a good tool should report:
    The hook's return statement (CAUSE) returns a Tensor rather than a
    one-element tuple; registered at register_full_backward_pre_hook
    (REGISTERED); raised in loss.backward() (ERROR).
"""
import torch
import torch.nn as nn

torch.manual_seed(0)


def clip_output_grad(module, grad_output):
    return grad_output[0].clamp(-0.1, 0.1)  # <- CAUSE


model = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 3))
model[2].register_full_backward_pre_hook(clip_output_grad)  # <- REGISTERED
opt = torch.optim.SGD(model.parameters(), lr=0.1)

x = torch.randn(8, 12)
y = torch.randint(0, 3, (8,))
for step in range(2):
    opt.zero_grad()
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()  # <- ERROR
    opt.step()
    print("step", step, loss.item())
