"""What both callbacks share: one training run under ``watch()`` and ``record()``, and
what to log from it.

:class:`TrainingRun` opens a watch session (``step_on="manual"``: the callback ends each
step when the framework says an optimizer step is done) and a recording, ends steps,
hands out the statistics and histograms of the sampled steps not logged yet, and closes
both, the recording first, also when training raised.
"""

from __future__ import annotations

import importlib
import logging
from collections import Counter
from collections.abc import Mapping
from types import ModuleType
from typing import Any

import torch
from torch import nn

from gradprobe._record import Recording
from gradprobe._watch import WatchSession, watch
from gradprobe._watch._export import histogram_tag, histograms, scalars
from gradprobe._watch._histograms import Histogram
from gradprobe.errors import GradprobeTypeError, GradprobeValueError, IntegrationNotFoundError
from gradprobe.errors import describe as _describe
from gradprobe.findings import Finding

__all__ = [
    "LOG",
    "Options",
    "RunResults",
    "TrainingRun",
    "findings_text",
    "import_framework",
    "log_findings",
    "plain_optimizer",
    "write_histograms",
]

LOG = logging.getLogger("gradprobe")
"""Where the callbacks write the findings of a run as text (level WARNING)."""

_RESERVED = ("optimizer", "step_on", "sample_every", "histograms")
_WATCH_OPTIONS = ("modules", "history", "exploding", "vanishing", "dead_relu")


def import_framework(names: tuple[str, ...], extra: str, what: str) -> ModuleType:
    """The first of ``names`` that imports, else :class:`IntegrationNotFoundError`
    naming ``extra``."""
    for name in names:
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    msg = (
        f"gradprobe.integrations.{extra} needs {what}, which is not installed. Install it "
        f'with the extra: pip install "gradprobe[{extra}]"'
    )
    raise IntegrationNotFoundError(msg)


class Options:
    """A callback's options, checked when the callback is made (not at the first step)."""

    def __init__(
        self,
        *,
        watch: object,
        record: object,
        histograms: object,
        sample_every: object,
        prefix: object,
        watch_options: object,
    ) -> None:
        for name, value in (("watch", watch), ("record", record), ("histograms", histograms)):
            if not isinstance(value, bool):
                msg = f"GradprobeCallback({name}=...) takes True or False, got {_describe(value)}."
                raise GradprobeTypeError(msg)
        if isinstance(sample_every, bool) or not isinstance(sample_every, int):
            msg = (
                f"GradprobeCallback(sample_every=...) takes a whole number of steps, got "
                f"{_describe(sample_every)}."
            )
            raise GradprobeTypeError(msg)
        if sample_every < 1:
            msg = f"GradprobeCallback(sample_every=...) must be at least 1, got {sample_every}."
            raise GradprobeValueError(msg)
        if not isinstance(prefix, str) or not prefix:
            msg = f"GradprobeCallback(prefix=...) must be a non-empty string, got {_describe(prefix)}."
            raise GradprobeTypeError(msg)
        if watch_options is None:
            watch_options = {}
        if not isinstance(watch_options, Mapping):
            msg = (
                f"GradprobeCallback(watch_options=...) takes a dict of gradprobe.watch() "
                f"keyword arguments, got {_describe(watch_options)}."
            )
            raise GradprobeTypeError(msg)
        taken = sorted(set(_RESERVED) & set(watch_options))
        if taken:
            msg = (
                f"GradprobeCallback(watch_options=...) cannot set {', '.join(taken)}: the "
                "callback passes the trainer's optimizer and ends steps itself; use the "
                "callback's own sample_every= and histograms= arguments."
            )
            raise GradprobeValueError(msg)
        unknown = sorted(set(watch_options) - set(_WATCH_OPTIONS), key=str)
        if unknown:
            msg = (
                f"GradprobeCallback(watch_options=...) got {', '.join(map(repr, unknown))}, "
                f"which gradprobe.watch() does not take; it takes {', '.join(_WATCH_OPTIONS)}."
            )
            raise GradprobeTypeError(msg)
        self.watch = bool(watch)
        self.record = bool(record)
        self.histograms = bool(histograms)
        self.sample_every = sample_every
        self.prefix = prefix
        self.watch_options = dict(watch_options)


def plain_optimizer(optimizer: object) -> torch.optim.Optimizer | None:
    """The ``torch.optim.Optimizer`` behind ``optimizer`` (wrappers such as Accelerate's and
    Lightning's keep it as ``.optimizer``), or None."""
    for _ in range(4):
        inner = getattr(optimizer, "optimizer", None)
        if isinstance(inner, torch.optim.Optimizer):
            optimizer = inner
        else:
            break
    return optimizer if isinstance(optimizer, torch.optim.Optimizer) else None


class TrainingRun:
    """``watch()`` and ``record()`` over one training run (see the module docstring)."""

    def __init__(self, model: nn.Module, optimizer: object, options: Options) -> None:
        self.options = options
        self.session: WatchSession | None = None
        self.recording: Recording | None = None
        self.trainer_steps: dict[int, int] = {}  # watch step -> the trainer's step number
        self.logged = -1  # the last watch step whose statistics were handed out
        self.findings: list[Finding] = []
        self.open = True
        if options.watch:
            self.session = watch(
                model,
                optimizer=plain_optimizer(optimizer),
                step_on="manual",
                sample_every=options.sample_every,
                histograms=options.histograms,
                **options.watch_options,
            )
        if options.record:
            recording = Recording()
            try:
                recording.__enter__()
            except BaseException:
                if self.session is not None:
                    self.session.close()
                raise
            self.recording = recording

    def end_step(self, trainer_step: int | None) -> bool:
        """End the current watch step; ``trainer_step`` is the framework's number for a
        training step, None for an evaluation batch (not logged). True when the step was
        sampled: its statistics are ready to log."""
        session = self.session
        if session is None or not self.open:
            return False
        session.step()
        number = session.steps - 1
        if trainer_step is None:
            return False
        self.trainer_steps[number] = trainer_step
        return number % self.options.sample_every == 0

    def pending(
        self,
    ) -> tuple[list[tuple[int, dict[str, float]]], list[tuple[int, str, Histogram]]]:
        """What the finished training steps not handed out yet have to log: their
        statistics as ``(trainer step, {tag: value})`` and their histograms as ``(trainer
        step, tag, histogram)`` (finite ones: TensorBoard cannot draw a NaN). Only sampled
        steps have any. Copies pending statistics to the host (one sync)."""
        session = self.session
        if session is None:
            return [], []
        last = self.logged
        metrics: list[tuple[int, dict[str, float]]] = []
        for record in session.history:
            if not record.finished or record.step <= self.logged:
                continue
            last = max(last, record.step)
            step = self.trainer_steps.get(record.step)
            if step is None or not record.sampled:
                continue
            values = dict(scalars(record, self.options.prefix))
            if values:
                metrics.append((step, values))
        kept = [
            (self.trainer_steps[h.step], histogram_tag(h, self.options.prefix), h)
            for h in histograms(session)
            if self.logged < h.step <= last and h.finite and h.step in self.trainer_steps
        ]
        self.logged = last
        return metrics, kept

    def stop(self, error: BaseException | None = None) -> list[Finding]:
        """Close the recording, then the watch session (idempotent); the findings of both,
        the recording's first (they name the line to change)."""
        if not self.open:
            return self.findings
        self.open = False
        recording, self.recording = self.recording, None
        try:
            if recording is not None:
                recording.finish(error)
                self.findings.extend(recording.findings)
        finally:
            if self.session is not None:
                self.session.close()
                self.findings.extend(self.session.findings())
        self.recording = recording
        return self.findings

    def summary(self) -> dict[str, float]:
        """``{"<prefix>/findings": n, "<prefix>/findings/GP201": count, ...}``."""
        prefix = self.options.prefix
        counts = Counter(finding.code for finding in self.findings)
        summary = {f"{prefix}/findings": float(len(self.findings))}
        summary.update(
            {f"{prefix}/findings/{code}": float(n) for code, n in sorted(counts.items())}
        )
        return summary


class RunResults:
    """What a callback exposes of its last (or current) training run: the findings, the
    watch session and the recording; shared by the Lightning and Transformers callbacks."""

    _run: TrainingRun | None = None

    @property
    def findings(self) -> list[Finding]:
        """The findings of the last run (empty while it runs): the recording's first, then
        the watch session's."""
        run = self._run
        return list(run.findings) if run is not None and not run.open else []

    @property
    def session(self) -> WatchSession | None:
        """The watch session of the last (or current) run."""
        return self._run.session if self._run is not None else None

    @property
    def recording(self) -> Recording | None:
        """The recording of the last (or current) run."""
        return self._run.recording if self._run is not None else None


def findings_text(findings: list[Finding], where: str) -> str:
    """The findings of ``where`` ("this fit") as the plain text ``print(recording)``
    shows: a header, then each finding with its locations and fix."""
    from gradprobe.render.findings import findings_text as text

    count = len(findings)
    if not count:
        return f"gradprobe: no findings in {where}"
    header = f"gradprobe: {count} finding{'' if count == 1 else 's'} in {where}"
    return text(findings, header=header)


def log_findings(findings: list[Finding], where: str) -> None:
    """Write ``findings`` to the ``gradprobe`` logger at WARNING, if there are any."""
    if findings:
        LOG.warning("%s", findings_text(findings, where))


def write_histograms(writer: Any, items: list[tuple[int, str, Histogram]]) -> int:
    """``writer.add_histogram_raw`` for each item, if the writer has it; how many."""
    add = getattr(writer, "add_histogram_raw", None)
    if not callable(add):
        return 0
    for step, tag, h in items:
        add(tag, h.min, h.max, h.num, h.sum, h.sum_squares, h.bucket_limits, h.bucket_counts, step)
    return len(items)
