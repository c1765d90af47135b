"""A tied weight listed once per module: the optimizer holds it twice (torch's test_optim: test_duplicate_params_in_one_param_group)."""

import torch

emb = torch.nn.Embedding(10, 4)
out = torch.nn.Linear(4, 10, bias=False)
out.weight = emb.weight
params = [*emb.parameters(), *out.parameters()]  # <- CAUSE
opt = torch.optim.SGD(params, lr=0.1)  # <- WARNED
