"""Correct 326 - training monitor with full backward hooks and forward hooks that only read

Pattern: https://docs.pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.register_full_backward_hook
         (hook(module, grad_input, grad_output) -> None: "The hook should not
         modify its arguments"; forward hooks storing detached activations)
Category: correct (module hooks used for monitoring)

What it does:
    Every Linear and Conv layer of a small CNN gets a forward hook that
    records the mean absolute activation (detached, as a Python float).  The
    layers that sit behind another layer get a full backward hook recording
    the norms of grad_output[0] and grad_input[0]; the stem conv, whose input
    (the images) never requires grad, has no grad_input to report, so its
    forward hook instead registers a read-only tensor hook on its output to
    record the gradient norm there.  All hooks return None and never touch
    their arguments; the ReLUs are out of place; the handles are removed
    after training.

Why a naive tool might flag it:
    Backward hooks on every layer, a tensor hook registered from inside a
    forward hook on a new output every iteration, Python-side containers
    filled from inside autograd, handles removed mid-script.

Ground truth a good tool should report:
    Nothing.
    EXPECT: no findings

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        layers monitored: ['features.0', 'features.3', 'classifier.1']
        stem grad-out norm recorded: True
        grad-out norms at last step: {'classifier.1': 0.2184, 'features.3': 0.0286, 'features.0': 0.0492}
        loss 2.2843 -> 1.6798
"""
import collections

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

model = nn.Sequential(
    collections.OrderedDict(
        features=nn.Sequential(
            nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
        ),
        classifier=nn.Sequential(nn.Flatten(), nn.Linear(16, 10)),
    )
)

act_log = collections.defaultdict(list)
grad_out_log = collections.defaultdict(list)
grad_in_log = collections.defaultdict(list)
handles = []


def make_hooks(name, is_stem):
    def on_forward(module, inputs, output):
        act_log[name].append(output.detach().abs().mean().item())
        if is_stem and output.requires_grad:
            output.register_hook(lambda grad: grad_out_log[name].append(grad.norm().item()))

    def on_backward(module, grad_input, grad_output):
        grad_out_log[name].append(grad_output[0].norm().item())
        g_in = grad_input[0]
        grad_in_log[name].append(None if g_in is None else g_in.norm().item())

    return on_forward, on_backward


monitored = [n for n, m in model.named_modules() if isinstance(m, (nn.Conv2d, nn.Linear))]
for name in monitored:
    module = model.get_submodule(name)
    is_stem = name == monitored[0]
    fwd, bwd = make_hooks(name, is_stem)
    handles.append(module.register_forward_hook(fwd))
    if not is_stem:
        handles.append(module.register_full_backward_hook(bwd))
print("layers monitored:", monitored)

optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
images = torch.randn(16, 1, 8, 8)
labels = torch.randint(0, 10, (16,))
for step in range(20):
    loss = F.cross_entropy(model(images), labels)
    if step == 0:
        first = loss.item()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

for h in handles:
    h.remove()
print("stem grad-out norm recorded:", len(grad_out_log["features.0"]) == 20)
print("grad-out norms at last step:", {k: round(v[-1], 4) for k, v in grad_out_log.items()})
print(f"loss {first:.4f} -> {loss.item():.4f}")
