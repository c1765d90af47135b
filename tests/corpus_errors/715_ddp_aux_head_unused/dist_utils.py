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
import os
import socket

import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def init_single_process():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=0, world_size=1)


def wrap(model):
    return DDP(model)  # <- CAUSE


def cleanup():
    dist.destroy_process_group()
