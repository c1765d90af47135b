"""Where a sequence repeats a short pattern: the op chains a picture draws as one box."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

__all__ = ["MAX_PERIOD", "MIN_REPEATS", "Repeat", "repeats"]

MAX_PERIOD = 8
"""The longest pattern looked for (an unrolled RNN step is a handful of ops)."""

MIN_REPEATS = 3
"""A pattern must occur this many times in a row before it is drawn once plus a box."""


class Repeat(NamedTuple):
    """``items[start : start + period * times]`` is one pattern of ``period`` items,
    ``times`` times in a row."""

    start: int
    period: int
    times: int


def repeats(items: Sequence[object]) -> list[Repeat]:
    """The runs of a repeated pattern in ``items``, left to right, not overlapping.

    At each position the pattern length (up to :data:`MAX_PERIOD`) that covers the most
    items wins; ties go to the shorter pattern. Linear in ``len(items)``.

    Example:
        >>> repeats(list("xabababy"))
        [Repeat(start=1, period=2, times=3)]
        >>> repeats(list("aaaa"))
        [Repeat(start=0, period=1, times=4)]
        >>> repeats(list("abcab"))
        []
    """
    codes: dict[object, int] = {}
    items = [codes.setdefault(item, len(codes)) for item in items]  # ints compare fastest
    size = len(items)
    # same[p][j]: how many positions from j on agree with the position p further along.
    same: list[list[int]] = []
    for period in range(1, min(MAX_PERIOD, size // MIN_REPEATS) + 1):
        agree = [0] * (size + 1)
        for j in range(size - period - 1, -1, -1):
            if items[j] == items[j + period]:
                agree[j] = agree[j + 1] + 1
        same.append(agree)
    found: list[Repeat] = []
    start = 0
    while start < size:
        best: Repeat | None = None
        for period, agree in enumerate(same, start=1):
            times = 1 + agree[start] // period
            if times >= MIN_REPEATS and (best is None or times * period > best.times * best.period):
                best = Repeat(start, period, times)
        if best is None:
            start += 1
            continue
        found.append(best)
        start += best.period * best.times
    return found
