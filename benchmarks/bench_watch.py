"""Overhead of gradprobe.watch on a training step, against the plain step in the same run.

    python benchmarks/bench_watch.py [--repeat N] [--steps N] [--models a,b,c]

One training step is ``zero_grad(); loss = model(x).pow(2).mean(); loss.backward();
opt.step()`` with SGD (momentum 0.9), 1 torch thread. Four copies of each model train on
the same batches:

* ``plain``: no watch;
* ``default``: ``watch(model)``, default settings: the NaN/Inf check (one sum) of every
  activation and gradient and unused-parameter detection every step, full statistics
  every 20th step;
* ``+ optimizer``: ``watch(model, optimizer=opt)``, which adds update ratios on sampled
  steps (a copy of the parameters during ``opt.step()``);
* ``every step``: ``watch(model, optimizer=opt, sample_every=1)``, full statistics at
  every step.

The sessions stay open for the whole run, as in a real training loop (their bounded
history fills up and old steps are folded away).

Each round runs ``--steps`` steps (default 20, one sampling period) of each copy,
interleaved step by step in rotating order, and sums each copy's step times; a ratio is
the median over rounds of the per-round ratio to the plain sum. Times are process CPU
time (``time.process_time``), which the other jobs on a shared machine disturb less than
wall time; memory-bandwidth contention from them still shows, so run it on a quiet
machine.

Targets (default settings): ResNet-18-shaped CNN, batch 8×3×64×64: ≤ 1.10;
MLP of 6 Linear(512, 512) with ReLUs, batch 64: ≤ 1.25; nn.TransformerEncoder, 4 layers,
d_model 256, batch 8×64: ≤ 1.25.
"""

from __future__ import annotations

import argparse
import copy
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import models
from gradprobe._watch import watch

TARGETS = {"resnet18": 1.10, "mlp": 1.25, "transformer": 1.25}


def build(name: str) -> tuple[nn.Module, torch.Tensor]:
    """The model and a batch of the sizes the targets are defined on."""
    generator = torch.Generator().manual_seed(0)
    if name == "resnet18":
        return models.resnet18_like(), torch.randn(8, 3, 64, 64, generator=generator)
    if name == "mlp":
        model = models.mlp(depth=6, width=512, in_features=512, out_features=512)
        return model, torch.randn(64, 512, generator=generator)
    if name == "transformer":
        model = models.transformer_encoder(layers=4, d_model=256)
        return model, torch.randn(8, 64, 256, generator=generator)
    msg = f"unknown model {name!r}; choose from {', '.join(TARGETS)}"
    raise ValueError(msg)


def trainer(model: nn.Module, x: torch.Tensor) -> tuple[Callable[[int], float], torch.optim.SGD]:
    opt = torch.optim.SGD(model.parameters(), lr=1e-4, momentum=0.9)

    def run(steps: int) -> float:
        start = time.process_time()
        for _ in range(steps):
            opt.zero_grad()
            model(x).pow(2).mean().backward()
            opt.step()
        return time.process_time() - start

    return run, opt


VARIANTS: dict[str, dict[str, object] | None] = {
    "plain": None,
    "default": {},
    "+ optimizer": {"optimizer": True},
    "every step": {"optimizer": True, "sample_every": 1},
}


def bench(name: str, repeat: int, steps: int) -> dict[str, float]:
    """Median ratio to ``plain`` of every watched variant."""
    model, x = build(name)
    runs = {}
    sessions = []
    for label, options in VARIANTS.items():
        replica = model if options is None else copy.deepcopy(model)
        run, opt = trainer(replica, x)
        runs[label] = run
        if options is not None:
            kwargs = {k: v for k, v in options.items() if k != "optimizer"}
            if options.get("optimizer"):
                kwargs["optimizer"] = opt
            sessions.append(watch(replica, **kwargs))  # type: ignore[arg-type]
    try:
        for run in runs.values():
            run(2)  # warm up allocator and kernels
        times: dict[str, list[float]] = {label: [] for label in runs}
        order = list(runs)
        for round_ in range(repeat):
            took = dict.fromkeys(order, 0.0)
            for step in range(steps):
                # Interleave single steps (rotating order) so that load from other
                # processes hits every copy alike.
                shift = (round_ + step) % len(order)
                for label in order[shift:] + order[:shift]:
                    took[label] += runs[label](1)
            for label, value in took.items():
                times[label].append(value)
        start = time.process_time()
        for session in sessions:
            _ = session.history  # one host copy, as a report makes
        report_ms = (time.process_time() - start) / len(sessions) * 1e3
        notes = [note for session in sessions for note in session.notes]
    finally:
        for session in sessions:
            session.close()
    ratios = {
        label: statistics.median(t / p for t, p in zip(values, times["plain"], strict=True))
        for label, values in times.items()
        if label != "plain"
    }
    per_step = {label: statistics.median(t) / steps * 1e3 for label, t in times.items()}
    print(
        f"{name:12s} default {ratios['default']:5.2f}x (target ≤ {TARGETS[name]:.2f})   "
        f"+ optimizer {ratios['+ optimizer']:5.2f}x   "
        f"full stats every step {ratios['every step']:5.2f}x"
    )
    print(
        "             ms/step: "
        + ", ".join(f"{label} {value:.1f}" for label, value in per_step.items())
        + f"; one report's host copy {report_ms:.1f} ms"
    )
    for note in notes:
        print(f"  note: {note}")
    return ratios


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=9, help="rounds (medians are taken)")
    parser.add_argument("--steps", type=int, default=20, help="training steps per round")
    parser.add_argument("--models", default=",".join(TARGETS), help="comma-separated")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    print(
        f"torch {torch.__version__}, 1 thread, {args.repeat} rounds of {args.steps} steps, "
        "median per-round ratio of process CPU time"
    )
    ok = True
    for name in args.models.split(","):
        ok &= bench(name, args.repeat, args.steps)["default"] <= TARGETS[name]
    print("targets met" if ok else "TARGET MISSED")
    return 0


if __name__ == "__main__":
    sys.exit(main())
