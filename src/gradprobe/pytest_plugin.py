"""The torch side of gradprobe's pytest plugin: the ``gradprobe`` fixture and test recordings.

The plugin registered with pytest is the top-level module ``_gradprobe_pytestplugin``,
which imports neither torch nor gradprobe; it imports this module only when a test uses
the ``gradprobe`` fixture, carries the ``gradprobe`` marker, or runs under
``--gradprobe-record``.

Example (in a test file; the fixture needs no import)::

    import torch
    import pytest

    @pytest.mark.gradprobe  # a failure report gets gradprobe's diagnosis
    def test_head_trains(gradprobe):
        model = torch.nn.Linear(4, 2)
        loss = model(torch.ones(3, 4)).sum()
        gradprobe.assert_grad_flows(model, loss)  # traced: drawn with --gradprobe-svg-dir
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, final

import torch

from gradprobe import _testing_recorder, testing
from gradprobe._trace import trace as _trace
from gradprobe._tracebacks import user_traceback
from gradprobe.errors import GradprobeError, GradprobeTypeError, RenderError, describe
from gradprobe.findings import Finding
from gradprobe.graph import Graph

if TYPE_CHECKING:
    from gradprobe._record import Recording

__all__ = ["GradprobeFixture", "TestRecording"]

_SLUG = re.compile(r"[^A-Za-z0-9_.-]+")
_MAX_SLUG = 120


@final
class TestRecording:
    """One test run under ``gradprobe.record()`` (the marker or ``--gradprobe-record``),
    plus ``gradprobe.watch`` sessions on the fixtures named by the marker's ``watch``."""

    __test__ = False  # not a test class, whatever pytest's collection rules say

    def __init__(self, watch: Mapping[str, object]) -> None:
        self._watch = dict(watch)
        self._sessions: list[tuple[str, Any]] = []
        self.recording: Recording | None = None
        self._ended = False
        self._asserted: tuple[Finding, ...] = ()  # findings of a failed gradprobe assertion
        self._assertion_failed = False
        self._problem: Exception | None = None

    def start(self) -> None:
        """Start recording (and watching); undone by :meth:`finish`, also if this raises."""
        from gradprobe._record import record

        try:
            for name, value in self._watch.items():
                self._sessions.append((name, _start_watch(name, value)))
            recording = record()
            recording.__enter__()
            self.recording = recording
        except BaseException:
            self.finish(None)
            raise

    def finish(self, error: BaseException | None) -> None:
        """Stop watching and recording; ``error`` is what the test raised, if anything."""
        if self._ended:
            return
        self._ended = True
        if error is not None:  # pytest shows the frames it would show without the recording
            user_traceback(error)
        if isinstance(error, testing.GradprobeAssertionError):
            self._asserted = error.findings
            self._assertion_failed = True
        for _, session in self._sessions:
            close = getattr(session, "close", None)
            if callable(close):
                close()
        if self.recording is not None:
            self.recording.finish(error)

    def failed_to_finish(self, problem: Exception) -> None:
        """Remember why :meth:`finish` raised, for the diagnosis section."""
        self._problem = problem

    @property
    def findings(self) -> list[Finding]:
        """The recording's findings (so far while the test runs), then the watch sessions'."""
        found: list[Finding] = []
        if self.recording is not None:
            if self._ended:
                found.extend(self.recording.findings)
            else:
                found.extend(_testing_recorder.active_findings())
        for _, session in self._sessions:
            extra = getattr(session, "findings", ())
            if callable(extra):
                extra = extra()
            found.extend(f for f in extra if isinstance(f, Finding))
        return found

    def findings_count(self) -> int:
        """How many findings: the number the summary line adds up."""
        return len(self.findings)

    def diagnosis(self, width: int = 100, root: Path | None = None) -> str:
        """The findings as plain text (the "gradprobe diagnosis" report section); files
        under ``root`` (pytest's rootdir) are shown relative to it."""
        from rich.console import Console

        from gradprobe.render.findings import findings_view

        if self._problem is not None:
            return (
                f"gradprobe could not finish recording this test: {type(self._problem).__name__}: "
                f"{self._problem}"
            )
        found = self.findings
        extra = [_relative(f, root) for f in found if not _said(f, self._asserted)]
        said = len(found) - len(extra)
        watched = ", ".join(name for name, _ in self._sessions)
        head = "gradprobe recorded this test" + (f" and watched {watched}" if watched else "")
        if not extra:
            if said:
                return (
                    f"{head}: {said} finding{'s' if said != 1 else ''}, all in the assertion above."
                )
            if self._assertion_failed:
                return f"{head}: nothing to add to the assertion above."
            return f"{head}: no autograd problem found (the failure is elsewhere)."
        console = Console(width=width, color_system=None, file=io.StringIO(), record=True)
        console.print(findings_view(tuple(extra)))
        body = "\n".join(line.rstrip() for line in console.export_text().splitlines())
        count = f"{len(extra)} finding{'s' if len(extra) != 1 else ''}"
        if said:
            count += f" (and {said} already in the assertion above)"
        return f"{head}: {count}\n{body}"


def _said(finding: Finding, asserted: Sequence[Finding]) -> bool:
    """True when the assertion's message already covers ``finding`` (same code, about the
    same parameter or node)."""
    names = set(finding.details.get("parameters", ()) or ())
    if finding.parameter:
        names.add(finding.parameter)
    for item in asserted:
        if item.code != finding.code:
            continue
        if item.parameter and item.parameter in names:
            return True
        if item.node and item.node == finding.node:
            return True
    return False


def _relative(finding: Finding, root: Path | None) -> Finding:
    if root is None or not finding.locations:
        return finding
    locations = []
    for location in finding.locations:
        path = Path(location.file)
        if path.is_absolute() and path.is_relative_to(root):
            location = replace(location, file=str(path.relative_to(root)))
        locations.append(location)
    return replace(finding, locations=tuple(locations))


def _start_watch(name: str, value: object) -> Any:
    if not isinstance(value, torch.nn.Module):
        msg = (
            f"@pytest.mark.gradprobe(watch={name!r}): the fixture {name!r} is "
            f"{describe(value)}, not an nn.Module; watch= names fixtures that return models."
        )
        raise GradprobeTypeError(msg)
    return _watch_function()(value)


def _watch_function() -> Callable[..., Any]:
    try:
        from gradprobe._watch import watch
    except ImportError:
        msg = (
            "watching needs gradprobe.watch, which this installation of gradprobe does not "
            "have yet; use record=True without watch=."
        )
        raise GradprobeError(msg) from None
    return watch


@final
class GradprobeFixture:
    """What the ``gradprobe`` fixture gives a test.

    - :meth:`trace`, :meth:`record`, :meth:`watch`: the gradprobe functions, with
      everything they start stopped when the test ends;
    - the :mod:`gradprobe.testing` assertions as methods; ``assert_grad_flows`` and
      ``assert_no_inplace_conflicts`` also trace the loss they are given;
    - every graph traced through the fixture is written as SVG when the test fails and
      pytest runs with ``--gradprobe-svg-dir``.
    """

    def __init__(self, marker: Callable[[], TestRecording | None] = lambda: None) -> None:
        self._marker = marker
        self._graphs: list[tuple[str, Graph]] = []
        self._recording: Recording | None = None
        self._sessions: list[Any] = []

    def __repr__(self) -> str:
        graphs = len(self._graphs)
        recording = self._recording is not None or (self._marker() is not None)
        return f"<gradprobe fixture: {graphs} graph{'s' if graphs != 1 else ''} traced" + (
            ", recording>" if recording else ">"
        )

    # -- helpers ------------------------------------------------------------------------------

    def trace(
        self,
        *tensors: torch.Tensor | Sequence[torch.Tensor],
        model: torch.nn.Module | None = None,
        names: Mapping[str, torch.Tensor] | None = None,
        max_nodes: int | None = None,
    ) -> Graph:
        """:func:`gradprobe.trace`, remembered for the failure report's SVG."""
        with _testing_recorder.quiet():
            graph = _trace(*tensors, model=model, names=names, max_nodes=max_nodes)
        self._graphs.append((f"trace {len(self._graphs) + 1}", graph))
        return graph

    def record(self, *, check_nan: bool = True) -> Recording:
        """Start recording now, until the test ends (or ``rec.finish()``), and return the
        recording; under the marker, the marker's recording."""
        marker = self._marker()
        if marker is not None and marker.recording is not None:
            return marker.recording
        if self._recording is None:
            from gradprobe._record import record

            recording = record(check_nan=check_nan)
            recording.__enter__()
            self._recording = recording
        return self._recording

    def watch(self, model: torch.nn.Module, **options: Any) -> Any:
        """``gradprobe.watch(model, **options)``, closed when the test ends."""
        session = _watch_function()(model, **options)
        self._sessions.append(session)
        return session

    @property
    def findings(self) -> list[Finding]:
        """Findings of the recording running for this test (marker or :meth:`record`), so
        far; empty when nothing records."""
        marker = self._marker()
        if marker is not None and marker.recording is not None:
            return marker.findings
        if self._recording is None:
            return []
        if _testing_recorder.active() is self._recording:
            return _testing_recorder.active_findings()
        return list(self._recording.findings)

    # -- assertions ---------------------------------------------------------------------------

    def assert_grad_flows(
        self,
        model: torch.nn.Module | Mapping[str, torch.Tensor],
        loss: torch.Tensor | None = None,
        *,
        params: Iterable[str | torch.Tensor] | None = None,
        atol: float = 0.0,
    ) -> None:
        """:func:`gradprobe.testing.assert_grad_flows`; traces ``loss`` first."""
        __tracebackhide__ = True
        if isinstance(loss, torch.Tensor):
            self._keep(loss, model)
        testing.assert_grad_flows(model, loss, params=params, atol=atol)

    def assert_no_inplace_conflicts(
        self,
        loss: torch.Tensor,
        *,
        model: torch.nn.Module | None = None,
        names: Mapping[str, torch.Tensor] | None = None,
    ) -> None:
        """:func:`gradprobe.testing.assert_no_inplace_conflicts`; traces ``loss`` first."""
        __tracebackhide__ = True
        if isinstance(loss, torch.Tensor):
            self._keep(loss, model if model is not None else names)
        testing.assert_no_inplace_conflicts(loss, model=model, names=names)

    def assert_grads_finite(
        self,
        model_or_tensors: torch.nn.Module
        | torch.Tensor
        | Sequence[torch.Tensor]
        | Mapping[str, torch.Tensor],
    ) -> None:
        """:func:`gradprobe.testing.assert_grads_finite`."""
        __tracebackhide__ = True
        testing.assert_grads_finite(model_or_tensors)

    def assert_is_leaf(self, tensor: torch.Tensor, name: str = "tensor") -> None:
        """:func:`gradprobe.testing.assert_is_leaf`."""
        __tracebackhide__ = True
        testing.assert_is_leaf(tensor, name)

    def assert_not_leaf(self, tensor: torch.Tensor, name: str = "tensor") -> None:
        """:func:`gradprobe.testing.assert_not_leaf`."""
        __tracebackhide__ = True
        testing.assert_not_leaf(tensor, name)

    def assert_hook_order(
        self,
        fn: Callable[[], object],
        expected: Sequence[str],
        *,
        model: torch.nn.Module | None = None,
    ) -> None:
        """:func:`gradprobe.testing.assert_hook_order`."""
        __tracebackhide__ = True
        testing.assert_hook_order(fn, expected, model=model)

    def assert_gradcheck(
        self,
        fn: Callable[..., Any],
        inputs: torch.Tensor | Sequence[Any],
        **options: Any,
    ) -> None:
        """:func:`gradprobe.testing.assert_gradcheck`."""
        __tracebackhide__ = True
        testing.assert_gradcheck(fn, inputs, **options)

    # -- plugin side --------------------------------------------------------------------------

    def _keep(self, loss: torch.Tensor, model: object) -> None:
        """Trace the graph of ``loss`` for the SVG; never fail the test because of it."""
        module = model if isinstance(model, torch.nn.Module) else None
        names = dict(model) if isinstance(model, Mapping) else None
        try:
            self.trace(loss, model=module, names=names)
        except GradprobeError:
            return

    def write_graphs(self, directory: Path, nodeid: str) -> tuple[list[str], list[str]]:
        """Write every graph traced so far under ``directory``; returns the report lines
        and the paths written."""
        if not self._graphs:
            hint = (
                "no graph to draw: trace the loss with the gradprobe fixture "
                "(gradprobe.trace(loss) or gradprobe.assert_grad_flows(model, loss))"
            )
            return [hint], []
        from gradprobe.errors import GraphvizNotFoundError
        from gradprobe.render import save_svg, to_dot

        directory.mkdir(parents=True, exist_ok=True)
        stem = _SLUG.sub("_", nodeid).strip("_")[:_MAX_SLUG] or "test"
        lines: list[str] = []
        written: list[str] = []
        several = len(self._graphs) > 1
        for index, (label, graph) in enumerate(self._graphs, start=1):
            path = directory / (f"{stem}-{index}.svg" if several else f"{stem}.svg")
            try:
                save_svg(graph, path)
            except GraphvizNotFoundError:
                path = path.with_suffix(".dot")
                path.write_text(to_dot(graph), encoding="utf-8")
                lines.append(f"{label}: {graph!r}; no Graphviz engine, DOT written to {path}")
            except RenderError as error:
                lines.append(f"{label}: {graph!r}; could not be drawn: {error}")
                continue
            else:
                lines.append(f"{label}: {graph!r} drawn to {path}")
            written.append(str(path))
        return lines, written

    def write_pictures(
        self, findings: Sequence[Finding], directory: Path, nodeid: str
    ) -> tuple[list[str], list[str]]:
        """Each finding's picture as ``directory/<test>-<code>-<n>.svg``; returns the
        report lines and the paths written."""
        from gradprobe.render.picture import write_pictures

        stem = _SLUG.sub("_", nodeid).strip("_")[:_MAX_SLUG] or "test"
        paths = write_pictures(findings, directory, prefix=f"{stem}-")
        lines = [f"{f.code}: pictured in {path}" for f, path in zip(findings, paths, strict=True)]
        return lines, [str(path) for path in paths]

    def close(self) -> None:
        """Stop what the fixture started (the test's teardown calls this)."""
        sessions, self._sessions = self._sessions, []
        for session in sessions:
            close = getattr(session, "close", None)
            if callable(close):
                close()
        recording, self._recording = self._recording, None
        if recording is not None:
            recording.finish(None)
        self._graphs.clear()
