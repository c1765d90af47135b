"""The plug-in point of the recorder: a probe watches one kind of thing while code runs.

``gradprobe.record()`` starts every registered probe on entry and stops them on exit (also
when the body raises), then asks each for its findings, passing the exception that
escaped, if any. Probes live next to the analysis they serve (hooks, numerics, ...) and
register themselves with :func:`register_probe`; the recorder does not import them by name.

A probe must:

- undo in :meth:`Probe.stop` everything :meth:`Probe.start` installed (patched functions,
  hooks, modes), idempotently, and never raise from it;
- hold no strong reference to the user's tensors or modules after ``stop`` (weak
  references, names, shapes and :class:`~gradprobe.findings.Location` s only);
- never change what the user's code computes, and never call ``.item()``, ``.tolist()``,
  ``bool()`` or ``nonzero()`` on a tensor inside a hook (no host syncs).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Protocol

from gradprobe.findings import Finding

__all__ = ["Probe", "probe_factories", "register_probe"]


class Probe(Protocol):
    """One watcher run by the recorder; see the module docstring for the rules."""

    def start(self) -> None:
        """Install patches or hooks."""

    def stop(self) -> None:
        """Remove everything ``start`` installed; idempotent; never raises."""

    def findings(self, error: BaseException | None) -> list[Finding]:
        """What this probe found, given the exception that escaped the recorded code."""
        ...


_factories: list[Callable[[], Probe]] = []
# Packages whose import registers gradprobe's own probes. `import gradprobe` imports no
# submodule eagerly, so the first recording loads them.
_BUILTIN = ("gradprobe.hooks",)


def register_probe(factory: Callable[[], Probe]) -> Callable[[], Probe]:
    """Add a probe class (or factory) that every new recording will start; usable as a
    class decorator. Registering the same factory twice has no effect."""
    if factory not in _factories:
        _factories.append(factory)
    return factory


def probe_factories() -> tuple[Callable[[], Probe], ...]:
    """The registered probe factories, in registration order."""
    for name in _BUILTIN:
        importlib.import_module(name)
    return tuple(_factories)
