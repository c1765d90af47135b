"""Case 679 - grad_input-rewriting hook on a layer whose input does not require grad

Source: pytorch/pytorch test/nn/test_module_hooks.py, TestModuleHookNN.test_hook_no_requires_grad (assertRaisesRegex 'where no input requires gradient')
Category: module hooks

Reported symptom:
    RuntimeError: Backward hook for Modules where no input requires gradient should always return None or None for all gradients.

Root cause:
    A "gradient noise" hook is registered with register_full_backward_hook on
    every Linear layer and always returns a new grad_input tuple. For the first
    layer the input is the data batch, which does not require grad, so there
    is no grad_input to replace; returning non-None values there is an error
    (and torch first warns that the hook fires on outputs only).

Ground truth a good tool should report:
    The hook returns tensors (CAUSE: the `return tuple(...)` line) for a module
    whose inputs need no gradient (the first Linear, REGISTERED by the loop);
    it should return None when grad_input entries are None. Raised in
    loss.backward() (ERROR).
"""
import torch
import torch.nn as nn

torch.manual_seed(0)


def add_grad_noise(module, grad_input, grad_output):
    noisy = grad_output[0] + 1e-3 * torch.randn_like(grad_output[0])
    return tuple(noisy @ module.weight for _ in grad_input)  # <- CAUSE


model = nn.Sequential(nn.Linear(7, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 1))
for layer in model:
    if isinstance(layer, nn.Linear):
        layer.register_full_backward_hook(add_grad_noise)  # <- REGISTERED

opt = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(32, 7), torch.randn(32, 1)
opt.zero_grad()
loss = nn.functional.mse_loss(model(x), y)
loss.backward()  # <- ERROR
opt.step()
print("loss", loss.item())
