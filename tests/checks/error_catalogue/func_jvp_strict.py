"""jvp(f, primals, tangents, strict=True): The output of f is independent of the inputs."""

import torch
from torch.func import jvp

scale = torch.randn(3)


def f(x):
    return scale * 2  # <- CAUSE


x = torch.randn(3)
out, tangent = jvp(f, (x,), (torch.ones(3),), strict=True)  # <- ERROR
