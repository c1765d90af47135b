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
import torch.nn as nn


class MultiTaskNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(8, 32), nn.ReLU())
        self.main_head = nn.Linear(32, 3)
        self.aux_head = nn.Linear(32, 1)

    def forward(self, x, with_aux=False):
        h = self.trunk(x)
        out = self.main_head(h)
        if with_aux:
            return out, self.aux_head(h)
        return out, None
