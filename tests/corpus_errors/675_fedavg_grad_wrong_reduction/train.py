"""Case 675 - federated averaging assigns an averaged gradient of the wrong shape

Source: pytorch/pytorch test/test_autograd.py, test_grad_assignment (assertRaises RuntimeError when assigning a .grad of the wrong shape)
Category: manual .grad assignment

Reported symptom:
    RuntimeError: attempting to assign a gradient of size '[5, 4]' to a tensor of size '[3, 4]'. Please ensure that the gradient and the tensor are the same size

Root cause:
    Each client returns a list of gradients; the server stacks them along a
    new leading client dimension and should average over dim 0. The helper in
    server.py averages over dim 1 instead, producing a tensor whose shape no
    longer matches the parameter, and assigning it to `p.grad` is rejected.

Ground truth a good tool should report:
    `torch.stack(client_grads).mean(1)` in server.py (CAUSE/ERROR) reduces the
    wrong dimension; use mean(0).
"""
import torch
import torch.nn as nn

from client import local_gradients
from server import Server

torch.manual_seed(0)

global_model = nn.Linear(4, 3)
server = Server(global_model)
clients = [(torch.randn(16, 4), torch.randint(0, 3, (16,))) for _ in range(5)]

for rnd in range(3):
    results = [local_gradients(global_model, x, y) for x, y in clients]
    server.aggregate([g for g, _ in results])
    print("round", rnd, "mean client loss", sum(l for _, l in results) / len(results))
