"""Exports of a watch session: a JSON-ready dict, and TensorBoard scalars and histograms
(duck-typed writers)."""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from gradprobe._watch._histograms import Histogram
from gradprobe._watch.records import StepRecord, json_number
from gradprobe.errors import GradprobeTypeError, describe

if TYPE_CHECKING:
    from gradprobe._watch.session import WatchSession

__all__ = ["histograms", "scalars", "session_dict", "write_scalars"]

FORMAT = 1
"""Version of the JSON layout written by :func:`session_dict`."""


def session_dict(session: WatchSession) -> dict[str, Any]:
    """``{"format", "options", "open", "steps", "notes", "findings", "gradient_flow",
    "history"}``, JSON-ready."""
    view = session._snapshot()  # one host copy for everything below
    history = view.records
    data = {
        "format": FORMAT,
        "options": session.options(),
        "open": session.open,
        "steps": session.steps,
        "notes": list(session.notes),
        "findings": [finding.to_dict() for finding in session._findings_of(view)],
        "gradient_flow": [
            {"parameter": name, "mean_abs": json_number(mean), "max_abs": json_number(top)}
            for name, mean, top in session._flow_of(history)
        ],
        "history": [record.to_dict() for record in history],
    }
    cleaned: dict[str, Any] = _clean(data)
    return cleaned


def _clean(value: Any) -> Any:
    """Non-finite floats anywhere (finding details too) as ``"nan"``/``"inf"`` strings."""
    if isinstance(value, float):
        return json_number(value)
    if isinstance(value, dict):
        return {key: _clean(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(item) for item in value]
    return value


def scalars(record: StepRecord, prefix: str) -> Iterator[tuple[str, float]]:
    """``(tag, value)`` for every statistic of one step."""
    for a in record.activations:
        stats = a.stats
        base = f"{prefix}/activation/{a.label}"
        for name in ("min", "max", "mean", "std", "zero_fraction"):
            value = getattr(stats, name)
            if value is not None:
                yield f"{base}/{name}", float(value)
        if stats.nan_count is not None and stats.inf_count is not None:
            yield f"{base}/nonfinite", float(stats.nan_count + stats.inf_count)
    for g in record.gradients:
        stats = g.stats
        group = "grad" if g.kind == "parameter" else "output_grad"
        base = f"{prefix}/{group}/{g.label}"
        if stats.max_abs is not None:
            yield f"{base}/max_abs", stats.max_abs
        if stats.norm is not None:
            yield f"{base}/norm", stats.norm
        if stats.mean_abs is not None:
            yield f"{base}/mean_abs", stats.mean_abs
    for name, ratio in record.update_ratios.items():
        yield f"{prefix}/update_ratio/{name}", ratio


def histograms(session: WatchSession) -> list[Histogram]:
    """The histograms ``session`` kept (``watch(..., histograms=True)``), by step; empty
    without that option. Copies what is pending to the host."""
    store = session._histograms
    return store.collect() if store is not None else []


def histogram_tag(histogram: Histogram, prefix: str) -> str:
    """``<prefix>/weight/<parameter>`` or ``<prefix>/grad/<parameter>``."""
    return f"{prefix}/{histogram.kind}/{histogram.name}"


def write_scalars(
    session: WatchSession,
    writer: Any,
    prefix: str,
    written: weakref.WeakKeyDictionary[Any, int],
) -> int:
    """Write every finished step of the history not yet written to this ``writer``, its
    scalars and its histograms; ``written`` remembers the last step written per writer
    (weakly)."""
    add_scalar = getattr(writer, "add_scalar", None)
    if not callable(add_scalar):
        msg = (
            f"to_tensorboard() needs a writer with add_scalar(tag, value, step), such as "
            f"torch.utils.tensorboard.SummaryWriter; got {describe(writer)}."
        )
        raise GradprobeTypeError(msg)
    if not isinstance(prefix, str) or not prefix:
        msg = f"to_tensorboard(prefix=...) must be a non-empty string, got {describe(prefix)}."
        raise GradprobeTypeError(msg)
    kept = histograms(session)
    add_histogram = getattr(writer, "add_histogram_raw", None)
    if kept and not callable(add_histogram):
        msg = (
            f"to_tensorboard() on a session with histograms=True needs a writer with "
            f"add_histogram_raw(tag, min, max, num, sum, sum_squares, bucket_limits, "
            f"bucket_counts, step), such as torch.utils.tensorboard.SummaryWriter; got "
            f"{describe(writer)}."
        )
        raise GradprobeTypeError(msg)
    by_step: dict[int, list[Histogram]] = {}
    for histogram in kept:
        if histogram.finite:
            by_step.setdefault(histogram.step, []).append(histogram)
    try:
        last = written.get(writer, -1)
    except TypeError:  # not weak-referenceable: write everything every time
        last = -1
    count = 0
    for record in session.history:
        if not record.finished or record.step <= last:
            continue
        for tag, value in scalars(record, prefix):
            add_scalar(tag, value, record.step)
            count += 1
        for h in by_step.get(record.step, ()):
            assert add_histogram is not None
            add_histogram(
                histogram_tag(h, prefix),
                h.min,
                h.max,
                h.num,
                h.sum,
                h.sum_squares,
                h.bucket_limits,
                h.bucket_counts,
                record.step,
            )
            count += 1
        last = record.step
    with contextlib.suppress(TypeError):
        written[writer] = last
    return count
