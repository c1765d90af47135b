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


class Server:
    def __init__(self, model, lr=0.1):
        self.model = model
        self.opt = torch.optim.SGD(model.parameters(), lr=lr)

    def aggregate(self, grads_per_client):
        self.opt.zero_grad()
        for i, p in enumerate(self.model.parameters()):
            client_grads = [grads[i] for grads in grads_per_client]
            p.grad = torch.stack(client_grads).mean(1)  # <- CAUSE,ERROR
        self.opt.step()
