"""Shared test setup: deterministic torch, one thread, and the repo root importable."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch
from hypothesis import settings

# `import benchmarks.models` from tests: the repo root is not a package on sys.path.
ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

torch.set_num_threads(1)

# Building torch graphs is slow on the first call of each op; a deadline would only flake.
settings.register_profile("gradprobe", deadline=None)
settings.load_profile("gradprobe")


@pytest.fixture(autouse=True)
def _seed() -> None:
    torch.manual_seed(0)
