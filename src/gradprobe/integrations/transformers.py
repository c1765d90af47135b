"""``GradprobeCallback`` for the Hugging Face ``Trainer``: watch and record ``train()``.

Example::

    from gradprobe.integrations.transformers import GradprobeCallback

    probe = GradprobeCallback(sample_every=20)
    trainer = Trainer(model=model, args=args, train_dataset=data, callbacks=[probe])
    with probe:  # closes everything also when train() raises
        trainer.train()
    for finding in probe.findings:
        print(finding)

From ``on_train_begin`` to ``on_train_end`` the model is watched
(:func:`gradprobe.watch`, with the trainer's optimizer) and autograd is recorded
(:func:`gradprobe.record`). Each optimizer step is one watch step (gradient accumulation
included); each evaluation batch run during training is an evaluation step of its own.
The statistics of sampled steps are appended to ``trainer.state.log_history`` (saved in
``trainer_state.json``) as ``{"<prefix>/...": value, "step": global_step}`` entries, and
the findings, counted as ``<prefix>/findings`` and ``<prefix>/findings/<code>``, in one
more entry at the end of training; they are written as text to the ``gradprobe`` Python
logger and kept on the callback (:attr:`GradprobeCallback.findings`). Give
``writer=`` (a ``torch.utils.tensorboard.SummaryWriter``) to get the statistics,
histograms of weights and gradients, and the findings in TensorBoard as well.

The ``TrainerCallback`` protocol has no event for a run that raised: use the callback as
a context manager around ``train()`` (or call :meth:`GradprobeCallback.close`) so hooks
and the recording are removed then too. A new ``train()`` also closes what a failed one
left open.

Needs ``transformers`` and ``accelerate`` (``pip install "gradprobe[transformers]"``).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any

from gradprobe.integrations._common import (
    Options,
    RunResults,
    TrainingRun,
    findings_text,
    import_framework,
    log_findings,
    write_histograms,
)

if TYPE_CHECKING:
    from typing_extensions import Self


_tf = import_framework(("transformers",), "transformers", "Hugging Face transformers")

__all__ = ["GradprobeCallback"]

_TrainerCallback: Any = _tf.TrainerCallback


class GradprobeCallback(RunResults, _TrainerCallback):  # type: ignore[misc]
    """Watch and record each ``trainer.train()``; log statistics and findings to the
    trainer's log history (see the module docstring).

    Args:
        watch: watch the model's modules and parameters (GP201-GP205, GP107).
        record: record autograd for the whole run (the findings of
            :func:`gradprobe.record`, with the line to change). It notes every operation:
            on a long run, keep it for a few hundred steps of a debugging run.
        histograms: keep weight and gradient histograms of the sampled steps (written to
            ``writer``).
        sample_every: full statistics (and histograms) every this many optimizer steps.
        prefix: the first part of every logged name.
        writer: a ``SummaryWriter`` (anything with ``add_scalar``, ``add_histogram_raw``
            and ``add_text``) that also gets statistics, histograms and findings.
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
        writer: Any = None,
        watch_options: Mapping[str, Any] | None = None,
    ) -> None:
        self.options = Options(
            watch=watch,
            record=record,
            histograms=histograms,
            sample_every=sample_every,
            prefix=prefix,
            watch_options=watch_options,
        )
        self.writer = writer
        self._run: TrainingRun | None = None

    # -- what the last run found -----------------------------------------------------------

    def close(self, error: BaseException | None = None) -> None:
        """Close the watch session and the recording of a run still open (idempotent)."""
        run = self._run
        if run is not None and run.open:
            run.stop(error)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close(exc)

    def __str__(self) -> str:
        """The findings of the last run as plain text (what is logged)."""
        return findings_text(self.findings, "this training run")

    # -- TrainerCallback events -------------------------------------------------------------

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.close()  # what a train() that raised left open
        model = kwargs.get("model")
        if model is None:
            return
        self._run = TrainingRun(model, kwargs.get("optimizer"), self.options)

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        run = self._run
        if run is not None and run.open and run.end_step(int(state.global_step)):
            self._log_pending(state, run)

    def on_prediction_step(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        run = self._run
        if run is not None and run.open:
            run.end_step(None)

    def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        run = self._run
        if run is None or not run.open:
            return
        run.stop()
        self._log_pending(state, run)
        step = int(state.global_step)
        state.log_history.append({**run.summary(), "step": step})
        writer = self.writer
        if writer is not None:
            for tag, value in run.summary().items():
                writer.add_scalar(tag, value, step)
            if run.findings:
                writer.add_text(
                    f"{self.options.prefix}/findings",
                    findings_text(run.findings, "this training run"),
                    step,
                )
        log_findings(run.findings, "this training run")

    # -- helpers ----------------------------------------------------------------------------

    def _log_pending(self, state: Any, run: TrainingRun) -> None:
        metrics, histograms = run.pending()
        for step, values in metrics:
            state.log_history.append({**values, "step": step})
            if self.writer is not None:
                for tag, value in values.items():
                    self.writer.add_scalar(tag, value, step)
        if self.writer is not None and histograms:
            write_histograms(self.writer, histograms)
