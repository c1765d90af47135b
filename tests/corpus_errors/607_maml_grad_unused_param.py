"""Case 607 - MAML-style inner step differentiates an unused auxiliary head

Source: pytorch/pytorch test/test_autograd.py, test_grad_unreachable (assertRaisesRegex "Set allow_unused=True")
Category: backward-arguments

Reported symptom:
    RuntimeError: The differentiated Tensor at index 4 appears to not have been used in the graph. Set allow_unused=True if this is the desired behavior.

Root cause:
    The inner adaptation step calls torch.autograd.grad(loss, list(model.parameters())),
    but the model owns an `aux` head that forward() never uses. Its weight is not
    part of the graph of the loss, and autograd.grad with the default
    allow_unused=False refuses to return None for it.

Ground truth a good tool should report:
    The torch.autograd.grad call of the inner step: either pass allow_unused=True
    (and handle the None) or differentiate only the parameters used in forward
    (body and head). Input index 4 is aux.weight.
"""
import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(0)


class Learner(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 16)
        self.head = nn.Linear(16, 3)
        self.aux = nn.Linear(16, 1)

    def forward(self, x, params=None):
        if params is None:
            params = dict(self.named_parameters())
        h = F.relu(F.linear(x, params["body.weight"], params["body.bias"]))
        return F.linear(h, params["head.weight"], params["head.bias"])


model = Learner()
meta_opt = torch.optim.Adam(model.parameters(), lr=1e-3)
inner_lr = 0.1

for task in range(2):
    xs, ys = torch.randn(10, 4), torch.randint(0, 3, (10,))
    xq, yq = torch.randn(10, 4), torch.randint(0, 3, (10,))
    names, params = zip(*model.named_parameters())
    support_loss = F.cross_entropy(model(xs), ys)
    grads = torch.autograd.grad(support_loss, params, create_graph=True)  # <- CAUSE,ERROR
    fast = {n: p - inner_lr * g for n, p, g in zip(names, params, grads)}
    query_loss = F.cross_entropy(model(xq, fast), yq)
    meta_opt.zero_grad()
    query_loss.backward()
    meta_opt.step()
    print(f"task {task} query loss {query_loss.item():.3f}")
