"""Case 680 - legacy register_backward_hook on a module with several autograd nodes

Source: pytorch/pytorch test/nn/test_module_hooks.py, TestModuleHookNN.test_hook_non_full_warning (assertWarnsRegex 'the forward contains multiple autograd Nodes')
Category: module hooks (warning)

Reported symptom:
    FutureWarning: Using a non-full backward hook when the forward contains multiple autograd Nodes is deprecated and will be removed in future versions. This hook will be missing some grad_input. Please use register_full_backward_hook to get the documented behavior.

Root cause:
    The user logs gradient norms of a residual block with the legacy
    Module.register_backward_hook. That API only attaches to the last autograd
    node of the forward, so for a block made of several ops the reported
    grad_input is not the gradient w.r.t. the block's input. Torch warns that
    the hook is missing gradients.

Ground truth a good tool should report:
    The register_backward_hook call (CAUSE) should be
    register_full_backward_hook; the warning fires when the hooked block runs
    its forward inside model(x) (ERROR).
"""
import torch
import torch.nn as nn

torch.manual_seed(0)


class ResBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc1 = nn.Linear(dim, dim)
        self.fc2 = nn.Linear(dim, dim)

    def forward(self, x):
        return x + self.fc2(torch.relu(self.fc1(x)))


grad_log = []


def log_grad_norm(module, grad_input, grad_output):
    grad_log.append(grad_input[0].norm().item())


model = nn.Sequential(nn.Linear(4, 8), ResBlock(8), nn.Linear(8, 1))
model[1].register_backward_hook(log_grad_norm)  # <- CAUSE
opt = torch.optim.SGD(model.parameters(), lr=0.05)
x, y = torch.randn(16, 4), torch.randn(16, 1)

opt.zero_grad()
loss = nn.functional.mse_loss(model(x), y)  # <- ERROR
loss.backward()
opt.step()
print("grad norms", grad_log)
