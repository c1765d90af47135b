"""``gradprobe.watch(model)``: activation and gradient statistics, NaN/Inf and gradient
findings for every step of a training loop.

Example:
    >>> import torch
    >>> from gradprobe._watch import watch
    >>> model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 1))
    >>> with watch(model) as session:
    ...     for _ in range(3):
    ...         model(torch.randn(8, 4)).pow(2).mean().backward()
    >>> session.steps, len(session.history)
    (3, 3)
    >>> [name for name, _, _ in session.gradient_flow()]
    ['0.weight', '0.bias', '2.weight', '2.bias']
"""

from gradprobe._watch._gather import RankedWatch
from gradprobe._watch.records import GradRecord, OutputRecord, StepRecord, TensorStats
from gradprobe._watch.session import (
    ModuleSelector,
    StepOn,
    WatchSession,
    WatchSessionClosed,
    watch,
)

__all__ = [
    "GradRecord",
    "ModuleSelector",
    "OutputRecord",
    "RankedWatch",
    "StepOn",
    "StepRecord",
    "TensorStats",
    "WatchSession",
    "WatchSessionClosed",
    "watch",
]
