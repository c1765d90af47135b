"""Case 633 - gradient-norm penalty built with loss.backward(create_graph=True)

Source: pytorch/pytorch test/test_autograd.py, test_backward_create_graph_warns ("Using backward() with create_graph=True" warning)
Category: memory-leak-warning

Reported symptom:
    UserWarning: Using backward() with create_graph=True will create a reference cycle between the parameter and its gradient which can cause a memory leak. We recommend using autograd.grad when creating the graph to avoid this. If you have to use this function, make sure to reset the .grad fields of your parameters to None after use to break the cycle and avoid the leak. (Triggered internally at ...)

Root cause:
    To penalise the gradient norm the script calls loss.backward(create_graph=True)
    and then differentiates the stored p.grad again. Each p.grad now holds a graph
    that references the parameter itself, a reference cycle that leaks memory every
    iteration (the .grad fields are never reset to None). torch warns about it.

Ground truth a good tool should report:
    The `loss.backward(create_graph=True)` line: compute the gradients with
    torch.autograd.grad(loss, params, create_graph=True) and build the penalty from
    those, leaving .grad out of the higher-order graph.
"""
import torch
from torch import nn

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(3, 16), nn.Tanh(), nn.Linear(16, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(20, 3), torch.randn(20, 1)

for step in range(3):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward(create_graph=True)  # <- CAUSE,ERROR
    penalty = sum(p.grad.pow(2).sum() for p in model.parameters())
    (0.1 * penalty).backward()
    opt.step()
    print(f"step {step} loss {loss.item():.4f} grad-norm penalty {penalty.item():.4f}")
