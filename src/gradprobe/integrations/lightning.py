"""``GradprobeCallback`` for PyTorch Lightning: watch and record every ``fit``.

Example::

    from gradprobe.integrations.lightning import GradprobeCallback

    probe = GradprobeCallback(sample_every=20)
    trainer = lightning.Trainer(callbacks=[probe], logger=TensorBoardLogger("logs"))
    trainer.fit(model, loader)
    for finding in probe.findings:
        print(finding)

From ``on_fit_start`` to ``on_fit_end`` (or ``on_exception``) the LightningModule is
watched (:func:`gradprobe.watch`, with the trainer's optimizer when it has one) and
autograd is recorded (:func:`gradprobe.record`). Each optimizer step is one watch step;
each validation batch run inside ``fit`` (the sanity check too) is an evaluation step of
its own, so the two never mix. The statistics of sampled training steps go to every
logger in ``trainer.loggers`` through ``log_metrics`` at the step the trainer counts
(``trainer.global_step`` before the step), the weight and gradient histograms to the
loggers whose ``experiment`` has ``add_histogram_raw`` (``TensorBoardLogger``). When the
fit ends, the findings are counted in ``<prefix>/findings`` and ``<prefix>/findings/<code>``
metrics, written as text to TensorBoard (``add_text``) and to the ``gradprobe`` Python
logger, and kept on the callback: :attr:`GradprobeCallback.findings`.

Needs the ``lightning`` package (``pip install "gradprobe[lightning]"``); the older
``pytorch_lightning`` package is used when ``lightning`` is not installed.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

from gradprobe.integrations._common import (
    Options,
    RunResults,
    TrainingRun,
    findings_text,
    import_framework,
    log_findings,
    write_histograms,
)

_pl = import_framework(("lightning.pytorch", "pytorch_lightning"), "lightning", "Lightning")

__all__ = ["GradprobeCallback"]

_Callback: Any = _pl.Callback


class GradprobeCallback(RunResults, _Callback):  # type: ignore[misc]
    """Watch and record each ``trainer.fit``; log statistics and findings through the
    trainer's loggers (see the module docstring).

    Args:
        watch: watch the LightningModule's modules and parameters (GP201-GP205, GP107).
        record: record autograd for the whole fit (the findings of
            :func:`gradprobe.record`, with the line to change). It notes every operation:
            on a long fit, keep it for a few hundred steps of a debugging run.
        histograms: log weight and gradient histograms of the sampled steps.
        sample_every: full statistics (and histograms) every this many optimizer steps.
        prefix: the first part of every metric and histogram name.
        watch_options: more :func:`gradprobe.watch` keyword arguments (``modules``,
            ``history``, ``exploding``, ``vanishing``, ``dead_relu``).

    Raises:
        GradprobeTypeError, GradprobeValueError: an option is unusable.
    """

    def __init__(
        self,
        *,
        watch: bool = True,
        record: bool = True,
        histograms: bool = True,
        sample_every: int = 20,
        prefix: str = "gradprobe",
        watch_options: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__()
        self.options = Options(
            watch=watch,
            record=record,
            histograms=histograms,
            sample_every=sample_every,
            prefix=prefix,
            watch_options=watch_options,
        )
        self._run: TrainingRun | None = None
        self._optimizer_steps = 0

    # -- what the last fit found -----------------------------------------------------------

    def __str__(self) -> str:
        """The findings of the last run as plain text (what is logged)."""
        return findings_text(self.findings, "this fit")

    # -- Lightning hooks --------------------------------------------------------------------

    def on_fit_start(self, trainer: Any, pl_module: Any) -> None:
        self._stop(None)
        optimizers = list(getattr(trainer, "optimizers", ()) or ())
        optimizer = optimizers[0] if len(optimizers) == 1 else None
        self._optimizer_steps = int(trainer.global_step)
        self._run = TrainingRun(pl_module, optimizer, self.options)

    def on_train_batch_end(
        self, trainer: Any, pl_module: Any, outputs: Any, batch: Any, batch_idx: int
    ) -> None:
        run = self._run
        if run is None or not run.open:
            return
        done = int(trainer.global_step)
        if done == self._optimizer_steps:  # accumulating gradients: the step goes on
            return
        self._optimizer_steps = done
        if run.end_step(done - 1):
            self._log_pending(trainer, run)

    def on_validation_batch_end(
        self,
        trainer: Any,
        pl_module: Any,
        outputs: Any,
        batch: Any,
        batch_idx: int,
        dataloader_idx: int = 0,
    ) -> None:
        run = self._run
        if run is not None and run.open:
            run.end_step(None)

    def on_fit_end(self, trainer: Any, pl_module: Any) -> None:
        self._finish(trainer, None)

    def on_exception(self, trainer: Any, pl_module: Any, exception: BaseException) -> None:
        # Lightning re-raises the exception after this hook: logging must not replace it.
        with contextlib.suppress(Exception):
            self._finish(trainer, exception)
        self._stop(exception)

    def teardown(self, trainer: Any, pl_module: Any, stage: str) -> None:
        self._stop(None)

    # -- helpers ----------------------------------------------------------------------------

    def _stop(self, error: BaseException | None) -> None:
        run = self._run
        if run is not None and run.open:
            run.stop(error)

    def _finish(self, trainer: Any, error: BaseException | None) -> None:
        run = self._run
        if run is None or not run.open:
            return
        run.stop(error)
        self._log_pending(trainer, run)
        loggers = list(getattr(trainer, "loggers", ()) or ())
        step = max(int(trainer.global_step) - 1, 0)
        summary = run.summary()
        for logger in loggers:
            logger.log_metrics(summary, step=step)
        if run.findings:
            text = findings_text(run.findings, "this fit")
            for logger in loggers:
                add_text = getattr(_experiment(logger), "add_text", None)
                if callable(add_text):
                    add_text(f"{self.options.prefix}/findings", _markdown(text), step)
        log_findings(run.findings, "this fit")

    def _log_pending(self, trainer: Any, run: TrainingRun) -> None:
        metrics, histograms = run.pending()
        loggers = list(getattr(trainer, "loggers", ()) or ())
        for logger in loggers:
            for step, values in metrics:
                logger.log_metrics(values, step=step)
            if histograms:
                write_histograms(_experiment(logger), histograms)


def _experiment(logger: Any) -> Any:
    """``logger.experiment`` (a ``SummaryWriter`` for ``TensorBoardLogger``), or None."""
    try:
        return logger.experiment
    except Exception:  # noqa: BLE001 - a logger without an experiment gets metrics only
        return None


def _markdown(text: str) -> str:
    """Plain text as a TensorBoard text panel (markdown): an indented code block."""
    return "\n".join("    " + line for line in text.splitlines())
