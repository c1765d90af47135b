"""What a watch session keeps of the steps it saw, and the host copy reports read.

:class:`Results` holds the last ``history`` finished steps as
:class:`~gradprobe._watch._step.Compacted` device tensors. Older steps are folded out
(:meth:`Results.evict`) into what findings still need: the first non-finite activation
and gradient and the first exploding gradient norm, kept on the device. Dead-ReLU tracking
and steps without a parameter gradient accumulate here too. :meth:`Results.snapshot`
copies everything pending to the host at once and builds the :class:`View` behind
``history``, ``findings()``, reports and exports.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from torch import Tensor

from gradprobe._watch import _stats
from gradprobe._watch._findings import DeadRelu, Hit, Thresholds, first_hits, watch_findings
from gradprobe._watch._step import PARAMETER, Compacted, Names, StepBuffer
from gradprobe._watch.records import StepRecord
from gradprobe.findings import Finding, Location

__all__ = ["FOLD_CHUNK", "Results", "View"]

FOLD_CHUNK = 16
"""Steps evicted from the history together (see :meth:`Results.evict`)."""


class View:
    """Host copies behind a report: built by :meth:`Results.snapshot`, shared until
    something changes."""

    def __init__(
        self,
        records: tuple[StepRecord, ...],
        hits: Mapping[str, Hit],
        dead: tuple[DeadRelu, ...],
        without_grad: Mapping[str, tuple[int, int]],
        grad_steps: int,
    ) -> None:
        self.records = records
        self.hits = hits
        self.dead = dead
        self.without_grad = without_grad
        self.grad_steps = grad_steps

    @classmethod
    def empty(cls) -> View:
        return cls((), {}, (), {}, 0)


class Results:
    """The history of one session and the device-side state its findings fold into."""

    def __init__(
        self,
        names: Names,
        thresholds: Thresholds,
        sources: Mapping[str, Location],
        sample_every: int,
        history: int,
    ) -> None:
        self.names = names
        self.thresholds = thresholds
        self.sources = sources
        self.sample_every = sample_every
        self.history_len = history
        self.history: deque[Compacted] = deque()
        self.layouts: dict[tuple[Any, ...], int] = {}
        self.layout_list: list[tuple[Any, ...]] = []
        self.first_fwd = _stats.FirstNonFinite()
        self.first_bwd = _stats.FirstNonFinite()
        self.exploding = _stats.FirstExceeding(thresholds.exploding)
        self.folded: dict[str, Hit] = {}  # hits from evicted steps that were already on the host
        self.alive: dict[int, Tensor] = {}
        self.rows: dict[int, int] = {}
        self.without: dict[int, list[int]] = {}  # parameter -> [first step, steps]
        self.grad_steps = 0

    def add(self, step: StepBuffer, without: list[int]) -> None:
        """Append the finished ``step`` (``without``: watched parameters it left without a
        gradient); fold the oldest steps out once :data:`FOLD_CHUNK` are over the limit."""
        if step.seen:
            self.grad_steps += 1
            for index in without:
                entry = self.without.setdefault(index, [step.number, 0])
                entry[1] += 1
        self.history.append(step.compact(without, finished=True))
        if len(self.history) >= self.history_len + FOLD_CHUNK:
            self.evict(len(self.history) - self.history_len)

    def track_relu(self, index: int, data: Tensor) -> None:
        """Fold a sampled output of the ReLU module ``index`` into the units seen firing."""
        found = _stats.alive_units(data)
        if found is None:
            return
        alive, rows = found
        previous = self.alive.get(index)
        if previous is None or previous.shape != alive.shape:
            self.rows[index] = 0
        else:
            alive = previous | alive
        self.alive[index] = alive
        self.rows[index] += rows

    def release_device_state(self) -> None:
        """Drop every device tensor; what was already copied to the host stays readable."""
        self.history = deque(c for c in self.history if c.result is not None)
        self.first_fwd = _stats.FirstNonFinite()
        self.first_bwd = _stats.FirstNonFinite()
        self.exploding = _stats.FirstExceeding(self.thresholds.exploding)
        self.alive.clear()

    def _intern(self, layout: tuple[Any, ...]) -> int:
        found = self.layouts.get(layout)
        if found is None:
            found = self.layouts[layout] = len(self.layout_list)
            self.layout_list.append(layout)
        return found

    def evict(self, count: int) -> None:
        """Fold the ``count`` oldest steps out of the history, keeping what findings need.

        Steps already copied to the host are scanned there. The others are folded on the
        device by runs of consecutive steps with the same layout (the usual case: every
        training step hooks the same tensors), one stacked tensor per run, so a fold costs
        the same dozen tiny kernels for one step or for :data:`FOLD_CHUNK` of them.
        """
        olds = [self.history.popleft() for _ in range(min(count, len(self.history)))]
        pending = []
        for old in olds:
            if old.result is None:
                pending.append(old)
                continue
            for kind, hit in first_hits([old.result], self.thresholds).items():
                self.folded.setdefault(kind, hit)
        self._fold_runs(pending, "fwd_mm", "fwd_keys", self.first_fwd.update)
        self._fold_runs(pending, "bwd_mm", "bwd_keys", self.first_bwd.update)
        self._fold_runs(pending, "pnorms", "pnorm_pos", self.exploding.update)

    def _fold_runs(
        self,
        steps: Sequence[Compacted],
        values: str,
        keys: str,
        update: Callable[[Tensor, int, int, int], None],
    ) -> None:
        run: list[Tensor] = []
        first = layout = last = -1

        def flush() -> None:
            if run:
                stacked = _stats.stack(run)
                update(stacked.view(-1, *stacked.shape[2:]), first, layout, stacked.shape[1])

        for step in steps:
            tensor = getattr(step, values)
            if tensor is None:
                continue
            this = self._intern(getattr(step, keys))
            if run and (this != layout or step.number != last + 1):
                flush()
                run = []
            if not run:
                first, layout = step.number, this
            run.append(tensor)
            last = step.number
        flush()

    def snapshot(self, running: Compacted | None) -> View:
        """Copy everything to the host (one transfer per device) and build the view;
        ``running``, the step still going on, is copied too but not kept."""
        if len(self.history) > self.history_len:
            self.evict(len(self.history) - self.history_len)
        pending = [c for c in self.history if c.result is None]
        tensors: list[Tensor] = []
        for compacted in pending:
            tensors.extend(compacted.tensors())
        if running is not None:
            tensors.extend(running.tensors())
        states = [self.first_fwd.state, self.first_bwd.state, self.exploding.state]
        tensors.extend(s for s in states if s is not None)
        relus = sorted(self.alive)
        tensors.extend(self.alive[i].logical_not().sum() for i in relus)
        values = iter(_stats.to_host(tensors))
        for compacted in pending:
            compacted.record([next(values) for _ in compacted.tensors()], self.names)
        records = [c.result for c in self.history if c.result is not None]
        if running is not None:
            records.append(running.record([next(values) for _ in running.tensors()], self.names))
        device_hits = self._resolve([next(values) if s is not None else None for s in states])
        dead = [
            DeadRelu(
                module=self.names.modules[i],
                type=self.names.types[i],
                dead=int(next(values)[0]),
                units=self.alive[i].numel(),
                rows=self.rows[i],
            )
            for i in relus
        ]
        hits = dict(self.folded)
        for kind, hit in device_hits.items():
            if kind not in hits or hit.step < hits[kind].step:
                hits[kind] = hit
        without = {
            self.names.parameters[i]: (first, count) for i, (first, count) in self.without.items()
        }
        return View(
            records=tuple(records[-self.history_len :]),
            hits=hits,
            dead=tuple(dead),
            without_grad=without,
            grad_steps=self.grad_steps,
        )

    def _resolve(self, states: list[list[float] | None]) -> dict[str, Hit]:
        hits: dict[str, Hit] = {}
        fwd, bwd, exploding = states
        if fwd is not None and fwd[0] >= 0:
            index, call, path = self.layout_list[int(fwd[1])][int(fwd[2])]
            hits["forward"] = self._hit(
                fwd, "activation", self.names.modules[index], self.names.types[index], call, path
            )
        if bwd is not None and bwd[0] >= 0:
            kind, index, call, path = self.layout_list[int(bwd[1])][int(bwd[2])]
            if kind == PARAMETER:
                hits["backward"] = self._hit(
                    bwd, "parameter", self.names.parameters[index], "", 0, ""
                )
            else:
                hits["backward"] = self._hit(
                    bwd, "output", self.names.modules[index], self.names.types[index], call, path
                )
        if exploding is not None and exploding[0] >= 0:
            index = self.layout_list[int(exploding[1])][int(exploding[2])]
            hits["exploding"] = Hit(
                int(exploding[0]),
                "parameter",
                self.names.parameters[index],
                "",
                0,
                "",
                math.nan,
                math.nan,
                value=exploding[3],
            )
        return hits

    def _hit(
        self,
        state: list[float],
        kind: Literal["activation", "output", "parameter"],
        name: str,
        type_: str,
        call: int,
        path: str,
    ) -> Hit:
        """A non-finite hit from a :class:`FirstNonFinite` state: its last two values are
        min and max on a sampled step, the sum twice between samples."""
        step = int(state[0])
        if step % self.sample_every == 0:
            return Hit(step, kind, name, type_, call, path, state[3], state[4])
        return Hit(step, kind, name, type_, call, path, None, None, total=state[3])

    def findings(self, view: View) -> list[Finding]:
        """The findings of ``view`` (GP201-GP205, GP107), most severe first."""
        return watch_findings(
            records=view.records,
            hits=view.hits,
            dead=view.dead,
            without_grad=view.without_grad,
            grad_steps=view.grad_steps,
            thresholds=self.thresholds,
            sources=self.sources,
            parameter_order=self.names.parameters,
        )

    def gradient_flow(self, records: Sequence[StepRecord]) -> list[tuple[str, float, float]]:
        """``(parameter, mean |grad|, max |grad|)`` in model order from the latest of
        ``records`` with parameter gradient statistics."""
        for record in reversed(records):
            grads = {
                name: stats
                for name, stats in record.parameter_grads.items()
                if stats.mean_abs is not None
            }
            if grads:
                return [
                    (name, float(grads[name].mean_abs or 0.0), float(grads[name].max_abs or 0.0))
                    for name in self.names.parameters
                    if name in grads
                ]
        return []
