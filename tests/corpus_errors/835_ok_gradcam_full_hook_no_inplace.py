"""Case 835 - Grad-CAM with full backward hooks on a model without in-place activations

Source: pytorch/pytorch test/nn/test_module_hooks.py, TestModuleHookNN.test_hook_inplace (no in-place modification -> hooks work)
Category: correct

Reported symptom:
    none - the script computes a class activation map and exits normally.

Root cause:
    none - the hooked conv is followed by an out-of-place ReLU, the backward
    hook only records grad_output and returns None, and the forward hook
    stores a detached copy of the activation.

Ground truth a good tool should report:
    Nothing.
EXPECT: no findings
"""
import torch
import torch.nn as nn

torch.manual_seed(0)

model = nn.Sequential(
    nn.Conv2d(3, 8, 3, padding=1),
    nn.ReLU(),
    nn.MaxPool2d(2),
    nn.Conv2d(8, 16, 3, padding=1),
    nn.ReLU(inplace=False),
    nn.AdaptiveAvgPool2d(1),
    nn.Flatten(),
    nn.Linear(16, 5),
).eval()

store = {}


def save_activation(module, inputs, output):
    store["act"] = output.detach()


def save_gradient(module, grad_input, grad_output):
    store["grad"] = grad_output[0].detach()


target = model[3]
h1 = target.register_forward_hook(save_activation)
h2 = target.register_full_backward_hook(save_gradient)

images = torch.randn(2, 3, 16, 16)
scores = model(images)
model.zero_grad()
scores[:, 2].sum().backward()
weights = store["grad"].mean((2, 3), keepdim=True)
cam = torch.relu((weights * store["act"]).sum(1))
cam = cam / (cam.amax((1, 2), keepdim=True) + 1e-8)
h1.remove()
h2.remove()
print("cam", tuple(cam.shape), float(cam.max()))
