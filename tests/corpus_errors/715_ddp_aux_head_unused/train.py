"""Case 715 - DDP model with an auxiliary head that only contributes on some steps

Source: pytorch/pytorch test/distributed/test_c10d_common.py / test_c10d_gloo.py, DistributedDataParallel unused-parameter tests (assertRaisesRegex "Expected to have finished reduction in the prior iteration")
Category: DistributedDataParallel

Reported symptom:
    RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one. This error indicates that your module has parameters that were not used in producing loss. You can enable unused parameter detection by passing the keyword argument `find_unused_parameters=True` to `torch.nn.parallel.DistributedDataParallel`, and by

Root cause:
    MultiTaskNet (model.py) computes the auxiliary head only when
    `with_aux=True`, which the loop enables every other step. On the first
    step the auxiliary head's parameters get no gradient, so DDP's reducer
    never finishes the bucket reduction; at the next forward it detects the
    unfinished reduction and raises. The DDP wrapper in dist_utils.py was
    created without find_unused_parameters=True.

Ground truth a good tool should report:
    The DDP construction in dist_utils.wrap (CAUSE) lacks
    find_unused_parameters=True for a model whose aux head is skipped on some
    iterations; raised at the next forward call in train.py (ERROR).
"""
import torch
import torch.nn as nn

import dist_utils
from model import MultiTaskNet

torch.manual_seed(0)

dist_utils.init_single_process()
model = dist_utils.wrap(MultiTaskNet())
opt = torch.optim.SGD(model.parameters(), lr=0.05)
x = torch.randn(16, 8)
y = torch.randint(0, 3, (16,))
aux_target = torch.randn(16, 1)

try:
    for step in range(4):
        opt.zero_grad()
        logits, aux = model(x, with_aux=(step % 2 == 1))  # <- ERROR
        loss = nn.functional.cross_entropy(logits, y)
        if aux is not None:
            loss = loss + 0.1 * nn.functional.mse_loss(aux, aux_target)
        loss.backward()
        opt.step()
        print("step", step, loss.item())
finally:
    dist_utils.cleanup()
