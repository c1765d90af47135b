"""Freed graphs: a second backward through a graph whose saved tensors were released, and
graphs kept alive across iterations (a running total of losses, carried state)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from gradprobe import _blame
from gradprobe._compat import FREED_ERROR
from gradprobe.checks._api import BackwardCall, Check, Run, register
from gradprobe.findings import Finding

__all__ = ["BackwardTwice", "KeptAlive"]


@register
class BackwardTwice(Check):
    """``backward()`` through a graph an earlier backward already freed (GP103)."""

    name = "gradprobe.freed_graphs.backward_twice"
    codes = ("GP103",)

    def on_backward_error(self, call: BackwardCall) -> Iterable[Finding]:
        if call.error is None or FREED_ERROR not in str(call.error):
            return ()
        return _blame._freed(call.run.events, call.event, call.roots)


@register
class KeptAlive(Check):
    """Graphs that grow across iterations or stay referenced after the run (GP112)."""

    name = "gradprobe.freed_graphs.kept_alive"
    codes = ("GP112",)

    def conclude(self, run: Run) -> Iterable[Finding]:
        return _blame._kept_alive(run.events)

    def on_namespace(self, run: Run, namespace: Mapping[str, Any]) -> Iterable[Finding]:
        return _blame.live_graphs(run.events, namespace)
