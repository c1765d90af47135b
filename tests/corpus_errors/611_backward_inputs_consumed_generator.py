"""Case 611 - backward(inputs=...) fed from a generator the optimizer already consumed

Source: pytorch/pytorch test/test_autograd.py, test_backward_with_inputs (assertRaisesRegex "cannot be empty")
Category: backward-arguments

Reported symptom:
    RuntimeError: `inputs` argument to `backward()` cannot be empty.

Root cause:
    `trainable` is a generator expression. The optimizer constructor iterates it to
    build its param group, so by the time loss.backward(inputs=list(trainable)) runs
    the generator is exhausted and `inputs` is an empty list, which backward()
    rejects.

Ground truth a good tool should report:
    The `trainable = (...)` generator line: materialise it as a list so it can be
    used twice. The error is raised at loss.backward(inputs=...).
"""
import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 2))
trainable = (p for n, p in model.named_parameters() if not n.startswith("0."))  # <- CAUSE: a one-shot generator
opt = torch.optim.SGD(trainable, lr=0.05)

x, y = torch.randn(32, 8), torch.randint(0, 2, (32,))
for step in range(3):
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward(inputs=list(trainable))  # <- ERROR
    opt.step()
    print(f"step {step} loss {loss.item():.3f}")
