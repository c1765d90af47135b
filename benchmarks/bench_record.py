"""Cost of ``gradprobe.record()`` on a training step, against the plain step and anomaly mode
measured in the same run (1 thread, medians of per-round ratios).

    python benchmarks/bench_record.py [--repeat N] [--steps N]

Models (the blame issue's sizes): ResNet-18-shaped CNN, batch 8x3x64x64; MLP of 6
Linear(512, 512)+ReLU, batch 64; nn.TransformerEncoder, 4 layers, d_model 256, batch 8x64.
One unit = zero_grad + forward + backward + SGD step. Each round runs the plain step, the
step under ``torch.autograd.set_detect_anomaly(True)`` and the step inside ``record()``
(default settings, NaN checks on), interleaved, so machine noise hits all three alike.
Target: record ÷ plain ≤ 2.0 on each model.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import gradprobe
from benchmarks.models import resnet18_like, transformer_encoder

TARGET = 2.0


def mlp512() -> nn.Module:
    layers: list[nn.Module] = []
    for _ in range(6):
        layers += [nn.Linear(512, 512), nn.ReLU()]
    return nn.Sequential(*layers)


def cases() -> dict[str, tuple[nn.Module, torch.Tensor]]:
    torch.manual_seed(0)
    return {
        "resnet18 8x3x64x64": (resnet18_like(num_classes=10), torch.randn(8, 3, 64, 64)),
        "mlp 6x512, batch 64": (mlp512(), torch.randn(64, 512)),
        "transformer 4x256, 8x64": (transformer_encoder(4, d_model=256), torch.randn(8, 64, 256)),
    }


def make_step(model: nn.Module, inputs: torch.Tensor) -> Callable[[], None]:
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)

    def step() -> None:
        opt.zero_grad()
        model(inputs).float().pow(2).mean().backward()
        opt.step()

    return step


def timed(step: Callable[[], None], steps: int, wrap: str) -> float:
    start = time.perf_counter()
    if wrap == "anomaly":
        with torch.autograd.set_detect_anomaly(True):
            for _ in range(steps):
                step()
    elif wrap == "record":
        with gradprobe.record():
            for _ in range(steps):
                step()
    else:
        for _ in range(steps):
            step()
    return (time.perf_counter() - start) / steps


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="interleaved rounds")
    parser.add_argument("--steps", type=int, default=3, help="training steps per timing")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    failed = False
    print(f"record() cost per training step, median of {args.repeat} rounds (target <= {TARGET}x)")
    for name, (model, inputs) in cases().items():
        step = make_step(model, inputs)
        for wrap in ("plain", "anomaly", "record"):  # warm up every path once
            timed(step, 1, wrap)
        ratios: dict[str, list[float]] = {"anomaly": [], "record": []}
        plains: list[float] = []
        for _ in range(args.repeat):
            plain = timed(step, args.steps, "plain")
            plains.append(plain)
            for wrap, found in ratios.items():
                found.append(timed(step, args.steps, wrap) / plain)
        record_ratio = statistics.median(ratios["record"])
        anomaly_ratio = statistics.median(ratios["anomaly"])
        verdict = "ok" if record_ratio <= TARGET else "OVER TARGET"
        failed |= record_ratio > TARGET
        print(
            f"  {name:26s} plain {statistics.median(plains) * 1e3:7.1f} ms   "
            f"anomaly {anomaly_ratio:4.2f}x   record {record_ratio:4.2f}x   {verdict}"
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
