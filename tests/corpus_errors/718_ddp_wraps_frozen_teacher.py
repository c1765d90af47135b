"""Case 718 - knowledge distillation wraps the frozen teacher in DDP too

Source: pytorch/pytorch test/distributed/test_c10d_common.py, DDP constructor checks ("DistributedDataParallel is not needed when a module doesn't have any parameter that requires a gradient.")
Category: DistributedDataParallel

Reported symptom:
    RuntimeError: DistributedDataParallel is not needed when a module doesn't have any parameter that requires a gradient.

Root cause:
    For distillation the teacher is frozen with requires_grad_(False) and then,
    like the student, wrapped with DistributedDataParallel. DDP only
    synchronises gradients; a module without any trainable parameter is
    rejected at construction.

Ground truth a good tool should report:
    The DDP(teacher) construction (CAUSE/ERROR): do not wrap the frozen
    teacher (the freezing line is CREATED).
"""
import os
import socket

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

torch.manual_seed(0)

sock = socket.socket()
sock.bind(("127.0.0.1", 0))
os.environ["MASTER_ADDR"] = "127.0.0.1"
os.environ["MASTER_PORT"] = str(sock.getsockname()[1])
sock.close()
dist.init_process_group("gloo", rank=0, world_size=1)

try:
    teacher = nn.Sequential(nn.Linear(12, 64), nn.ReLU(), nn.Linear(64, 5)).eval()
    teacher.requires_grad_(False)  # <- CREATED
    student = nn.Sequential(nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, 5))

    student = DDP(student)
    teacher = DDP(teacher)  # <- CAUSE,ERROR
    opt = torch.optim.Adam(student.parameters(), lr=1e-3)

    x = torch.randn(32, 12)
    opt.zero_grad()
    with torch.no_grad():
        soft = torch.softmax(teacher(x) / 2.0, -1)
    loss = nn.functional.kl_div(torch.log_softmax(student(x) / 2.0, -1), soft, reduction="batchmean")
    loss.backward()
    opt.step()
    print("kd loss", loss.item())
finally:
    dist.destroy_process_group()
