"""Case 162 - multi-task heads kept in a plain dict are skipped by model.double()

Source: https://github.com/pytorch/pytorch/issues/632
        "parameters not registered in module" (`self.list_relations[rel] =
        nn.Linear(...)` inside a plain dict); the device flavour of the same
        mistake: https://github.com/pytorch/pytorch/issues/1053 ("after call
        a.cuda(), the Conv1d submodules are still in CPU mode")
Category: registration (submodules in a plain dict)

Reported symptom:
    After converting the model (`.cuda()` in the reports, `.double()` here)
    the forward crashes inside one of the heads:
        RuntimeError: mat1 and mat2 must have the same dtype, but got Double and Float
    The heads were also never in `model.parameters()`, so before the
    conversion they were silently not trained.

Root cause:
    `self.heads = {...}` assigns a plain dict; nn.Module only registers
    Modules, Parameters and buffers assigned directly (or through
    nn.ModuleDict / ModuleList).  `model.double()` (like `.to()`, `.cuda()`,
    `.train()`, `state_dict()`, `parameters()`) walks the registered children
    only, so the trunk becomes float64 while every head stays float32.

Ground truth a good tool should report:
    The error at line 56 comes from `heads['age']` (an nn.Linear held in the
    plain dict created at line 52), whose weight is still float32 after
    `model.double()` at line 69; its parameters are not in the optimizer
    either.  Use nn.ModuleDict.
    EXPECT: kind=unregistered_submodule; container=heads; cause_line=52;
            error_line=56

Observed (torch 2.13.0, CPU, this script):
    exit code: 1
    stdout:
        parameter tensors seen by the optimizer (trunk): 4 | inside the heads dict: 4
        trunk dtype: torch.float64 | age head dtype: torch.float32
    stderr (last line):
        RuntimeError: mat1 and mat2 must have the same dtype, but got Double and Float
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MultiTaskNet(nn.Module):
    def __init__(self, n_features=10, width=16):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(n_features, width), nn.Tanh(),
                                   nn.Linear(width, width), nn.Tanh())
        self.heads = {"age": nn.Linear(width, 1), "smoker": nn.Linear(width, 2)}  # <- CAUSE: plain dict, heads are not submodules

    def forward(self, x):
        h = self.trunk(x)
        return {name: head(h) for name, head in self.heads.items()}  # <- ERROR: float64 input, float32 head weight


model = MultiTaskNet()
optimizer = torch.optim.LBFGS(model.parameters(), lr=0.5, max_iter=5)
print("parameter tensors seen by the optimizer (trunk):", len(list(model.parameters())),
      "| inside the heads dict:", sum(len(list(h.parameters())) for h in model.heads.values()))

x = torch.randn(32, 10)
age = torch.randn(32, 1)
smoker = torch.randint(0, 2, (32,))

# switch to float64 for a precise second-order fit
model.double()
print("trunk dtype:", model.trunk[0].weight.dtype, "| age head dtype:", model.heads["age"].weight.dtype)


def closure():
    optimizer.zero_grad()
    out = model(x.double())
    loss = F.mse_loss(out["age"], age.double()) + F.cross_entropy(out["smoker"], smoker)
    loss.backward()
    return loss


optimizer.step(closure)
