"""Cost of importing gradprobe against ``import torch``, each in a fresh interpreter, and of
the command line's ``gradprobe --help`` (which must not import torch).

    python benchmarks/bench_import.py [--repeat N]

``import gradprobe`` alone loads names on first use, so it is nearly free; the number that
counts is the package with every public name loaded (what the eager ``__init__`` used to
do: torch, the recorder, the renderers), against ``import torch``. Each round runs the four
commands one after the other, so machine noise hits all of them alike; the report gives the
medians and the median of the per-round ratios.
Target: every public name ÷ import torch ≤ 1.15.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

TARGET = 1.15
SRC = Path(__file__).resolve().parent.parent / "src"

EVERY_NAME = "import gradprobe; [getattr(gradprobe, name) for name in gradprobe.__all__]"
COMMANDS = {
    "import torch": ["-c", "import torch"],
    "every public name": ["-c", EVERY_NAME],
    "import gradprobe": ["-c", "import gradprobe"],
    "gradprobe --help": ["-m", "gradprobe", "--help"],
}


def _time(args: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, *args], env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=9, help="rounds (default: %(default)s)")
    args = parser.parse_args()
    # this checkout's gradprobe, whatever is installed
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")])),
    }
    for command in COMMANDS.values():  # warm the OS file cache and write the .pyc files
        _time(command, env)
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for _ in range(args.repeat):
        for name, command in COMMANDS.items():
            times[name].append(_time(command, env))
    ratios = [g / t for g, t in zip(times["every public name"], times["import torch"], strict=True)]
    print(f"{args.repeat} rounds, python {sys.version.split()[0]}, gradprobe from {SRC}")
    for name, values in times.items():
        print(f"  {name:<18} median {statistics.median(values) * 1000:7.0f} ms")
    ratio = statistics.median(ratios)
    verdict = "within" if ratio <= TARGET else "above"
    print(
        f"  every public name / import torch: {ratio:.3f} "
        f"(median of per-round ratios; {verdict} the {TARGET} target)"
    )


if __name__ == "__main__":
    main()
