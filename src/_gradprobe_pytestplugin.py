"""gradprobe's pytest plugin: the ``gradprobe`` fixture, marker and options.

Registered through the ``pytest11`` entry point. This module lives outside the
``gradprobe`` package on purpose: importing anything inside the package imports torch
(``gradprobe/__init__.py`` does), and every pytest run in an environment where gradprobe
is installed loads this plugin. So it imports only pytest and the standard library; torch
and gradprobe are imported when a test uses the fixture or the marker, or when
``--gradprobe-record`` asks for it (the torch side is :mod:`gradprobe.pytest_plugin`).

- fixture ``gradprobe``: trace/record/watch helpers and the ``gradprobe.testing``
  assertions, cleaned up at teardown (:class:`gradprobe.pytest_plugin.GradprobeFixture`);
- marker ``@pytest.mark.gradprobe(record=True, watch=None)``: run the test under
  ``gradprobe.record()`` (and ``gradprobe.watch`` on the fixtures named by ``watch``) and
  add the diagnosis to the failure report as a "gradprobe diagnosis" section;
- ``--gradprobe-record``: record every test (``@pytest.mark.gradprobe(record=False)``
  opts one out);
- ``--gradprobe-svg-dir DIR``: write the graphs the fixture traced in a failing test, and
  a picture of each finding of its recording (``<test>-GP101-0.svg``), as SVG files in DIR
  and name them in the report.

Everything that reaches the controller under pytest-xdist is a string: report sections
and one JSON string attribute (``report.gradprobe``) for the summary line.
"""

from __future__ import annotations

import json
from collections.abc import Generator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from gradprobe.pytest_plugin import GradprobeFixture, TestRecording

MARKER = "gradprobe"
MARKER_ARGS = ("record", "watch")
DIAGNOSIS_SECTION = "gradprobe diagnosis"
GRAPH_SECTION = "gradprobe graph"
_FALLBACK_WIDTH = 100


class MarkerError(Exception):
    """``@pytest.mark.gradprobe`` was given arguments it does not accept; the test fails at
    setup with this message."""


@dataclass
class _Config:
    """Options as validated at start-up, and the counts behind the summary line."""

    record_all: bool
    svg_dir: Path | None
    recorded: int = 0
    diagnosed: int = 0
    findings: int = 0
    graphs: list[str] = field(default_factory=list)


@dataclass
class _Item:
    """What the plugin keeps for one test while it runs."""

    fixture: GradprobeFixture | None = None
    recording: TestRecording | None = None


_CONFIG = pytest.StashKey[_Config]()
_ITEM = pytest.StashKey[_Item]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("gradprobe", "gradprobe: autograd diagnosis")
    group.addoption(
        "--gradprobe-record",
        action="store_true",
        default=False,
        help="run every test under gradprobe.record() and add the diagnosis to failure "
        "reports (opt a test out with @pytest.mark.gradprobe(record=False), e.g. one that "
        "opens gradprobe.record() itself: recordings do not nest).",
    )
    group.addoption(
        "--gradprobe-svg-dir",
        metavar="DIR",
        default=None,
        help="write the autograd graphs traced through the gradprobe fixture in each "
        "failing test, and a picture of each finding its recording made, as SVG files in "
        "DIR (created if missing).",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(record=True, watch=None): run the test under gradprobe.record() and, "
        "with watch='fixture' or watch=['a', 'b'], gradprobe.watch() on those fixtures; "
        "a failure report then includes gradprobe's diagnosis.",
    )
    settings = _Config(
        record_all=bool(config.getoption("gradprobe_record")),
        svg_dir=_svg_dir(config),
    )
    config.stash[_CONFIG] = settings
    config.pluginmanager.register(_Reporter(settings), "gradprobe-reporter")


def _svg_dir(config: pytest.Config) -> Path | None:
    value = config.getoption("gradprobe_svg_dir")
    if value is None:
        return None
    if not str(value).strip():
        msg = "--gradprobe-svg-dir needs a directory, got an empty value."
        raise pytest.UsageError(msg)
    path = Path(value).expanduser()
    if not path.is_absolute():
        path = Path(config.invocation_params.dir) / path
    if path.exists() and not path.is_dir():
        msg = (
            f"--gradprobe-svg-dir={value!r} exists and is not a directory; pass a directory "
            "(it is created if missing) where gradprobe writes one SVG per failing test."
        )
        raise pytest.UsageError(msg)
    return path


# -- the marker ---------------------------------------------------------------------------------


def marker_options(item: pytest.Item) -> tuple[bool | None, tuple[str, ...]]:
    """``(record, watch)`` from the item's ``gradprobe`` marker; ``record`` is None when the
    item has no marker. Raises :class:`MarkerError` with a readable message when the marker's
    arguments are wrong."""
    marker = item.get_closest_marker(MARKER)
    if marker is None:
        return None, ()
    if marker.args:
        msg = (
            f"@pytest.mark.{MARKER} takes keyword arguments only ({', '.join(MARKER_ARGS)}), "
            f"got positional {marker.args!r}; write @pytest.mark.{MARKER}(record=True)."
        )
        raise MarkerError(msg)
    unknown = sorted(set(marker.kwargs) - set(MARKER_ARGS))
    if unknown:
        msg = (
            f"@pytest.mark.{MARKER} got unknown argument{'s' if len(unknown) > 1 else ''} "
            f"{', '.join(repr(name) for name in unknown)}; it accepts "
            f"{', '.join(MARKER_ARGS)}."
        )
        raise MarkerError(msg)
    record = marker.kwargs.get("record", True)
    if not isinstance(record, bool):
        msg = (
            f"@pytest.mark.{MARKER}(record=...) must be True or False, got {record!r} "
            f"({type(record).__name__})."
        )
        raise MarkerError(msg)
    watch = marker.kwargs.get("watch")
    names: tuple[str, ...]
    if watch is None:
        names = ()
    elif isinstance(watch, str):
        names = (watch,)
    elif isinstance(watch, (list, tuple)) and all(isinstance(n, str) for n in watch):
        names = tuple(watch)
    else:
        msg = (
            f"@pytest.mark.{MARKER}(watch=...) must name fixtures that hold nn.Modules: a "
            f"string or a list of strings, got {watch!r}; e.g. watch='model'."
        )
        raise MarkerError(msg)
    fixtures = getattr(item, "fixturenames", ())
    missing = [name for name in names if name not in fixtures]
    if missing:
        msg = (
            f"@pytest.mark.{MARKER}(watch={watch!r}): {', '.join(repr(n) for n in missing)} "
            f"{'is' if len(missing) == 1 else 'are'} not a fixture of this test; add "
            f"{'it' if len(missing) == 1 else 'them'} to the test's arguments "
            f"(it uses: {', '.join(fixtures) or 'no fixtures'})."
        )
        raise MarkerError(msg)
    if names and not record:
        msg = f"@pytest.mark.{MARKER}(watch=...) needs record=True: watching is part of recording."
        raise MarkerError(msg)
    return record, names


# -- the fixture --------------------------------------------------------------------------------


@pytest.fixture
def gradprobe(request: pytest.FixtureRequest) -> Iterator[GradprobeFixture]:
    """gradprobe's helpers for one test: ``trace``, ``record``, ``watch`` and the
    ``gradprobe.testing`` assertions; everything started is stopped at teardown, and the
    graphs it traced are written as SVG for a failing test with ``--gradprobe-svg-dir``."""
    from gradprobe.pytest_plugin import GradprobeFixture

    state = request.node.stash.setdefault(_ITEM, _Item())
    fixture = GradprobeFixture(lambda: state.recording)
    state.fixture = fixture
    try:
        yield fixture
    finally:
        fixture.close()


# -- running a test -----------------------------------------------------------------------------


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    try:
        marker_options(item)
    except MarkerError as error:
        problem = str(error)
    else:
        return
    pytest.fail(problem, pytrace=False)  # outside `except`: no "during handling" chain


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, object, object]:
    settings = item.config.stash[_CONFIG]
    record, watch = marker_options(item)  # validated in setup
    if not (record or (record is None and settings.record_all)):
        return (yield)
    from gradprobe.pytest_plugin import TestRecording

    state = item.stash.setdefault(_ITEM, _Item())
    funcargs: dict[str, Any] = getattr(item, "funcargs", {})
    recording = TestRecording({name: funcargs.get(name) for name in watch})
    state.recording = recording
    recording.start()  # a bad watch= target raises here and fails the test
    try:
        result = yield
    except BaseException as error:
        _finish(recording, error)
        raise
    _finish(recording, None)
    return result


def _finish(recording: TestRecording, error: BaseException | None) -> None:
    """End the recording without ever replacing the test's own outcome."""
    try:
        recording.finish(error)
    except Exception as problem:  # noqa: BLE001 - reported in the diagnosis section instead
        recording.failed_to_finish(problem)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if report.when != "call":
        return report
    state = item.stash.get(_ITEM, None)
    if state is None:
        return report
    summary: dict[str, Any] = {}
    recording = state.recording
    if recording is not None:
        summary["recorded"] = True
        try:
            summary["findings"] = recording.findings_count()
            if report.failed:
                text = recording.diagnosis(_width(item.config), Path(item.config.rootpath))
                report.sections.append((DIAGNOSIS_SECTION, text))
        except Exception as problem:  # noqa: BLE001 - never turn a report into an INTERNALERROR
            report.sections.append((DIAGNOSIS_SECTION, _broken("diagnose this test", problem)))
    settings = item.config.stash[_CONFIG]
    if report.failed and settings.svg_dir is not None and (state.fixture or recording):
        from gradprobe.pytest_plugin import GradprobeFixture

        drawer = state.fixture or GradprobeFixture()
        lines, written = [], []
        try:
            if state.fixture is not None:
                lines, written = state.fixture.write_graphs(settings.svg_dir, item.nodeid)
            findings = recording.findings if recording is not None else drawer.findings
            if findings:  # each finding's picture: the graph around its problem
                more, pictures = drawer.write_pictures(findings, settings.svg_dir, item.nodeid)
                lines, written = [*lines, *more], [*written, *pictures]
        except Exception as problem:  # noqa: BLE001 - as above
            lines = [*lines, _broken("draw the graphs", problem)]
        if lines:
            report.sections.append((GRAPH_SECTION, "\n".join(lines)))
        summary["graphs"] = written
    if summary:
        summary["failed"] = report.failed
        report.gradprobe = json.dumps(summary)  # type: ignore[attr-defined]
    return report


def pytest_runtest_teardown(item: pytest.Item) -> None:
    state = item.stash.get(_ITEM, None)
    if state is not None:
        state.recording = None  # the report is made: nothing needs the recording any more


class _Reporter:
    """Counts for the summary line, registered once per pytest config (with xdist it runs on
    the controller too, fed by what the workers sent: strings only)."""

    def __init__(self, settings: _Config) -> None:
        self.settings = settings

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        text = getattr(report, "gradprobe", None)
        if report.when != "call" or not isinstance(text, str):
            return
        settings = self.settings
        summary = json.loads(text)
        if summary.get("recorded"):
            settings.recorded += 1
            if summary.get("failed"):
                settings.diagnosed += 1
                settings.findings += int(summary.get("findings", 0))
        settings.graphs.extend(str(path) for path in summary.get("graphs", ()))

    def pytest_terminal_summary(self, terminalreporter: Any, config: pytest.Config) -> None:
        if hasattr(config, "workerinput"):  # an xdist worker: the controller reports
            return
        settings = self.settings
        if not (settings.recorded or settings.record_all or settings.svg_dir is not None):
            return
        count = settings.recorded
        parts = [f"{count} test{'s' if count != 1 else ''} recorded"]
        if count:
            parts.append(
                f"{settings.diagnosed} failing test{'s' if settings.diagnosed != 1 else ''} "
                f"diagnosed ({settings.findings} finding{'s' if settings.findings != 1 else ''})"
            )
        if settings.svg_dir is not None:
            graphs = len(settings.graphs)
            parts.append(
                f"{graphs} graph{'s' if graphs != 1 else ''} written to {settings.svg_dir}"
            )
        terminalreporter.write_line("gradprobe: " + ", ".join(parts))


def _broken(what: str, problem: Exception) -> str:
    return (
        f"gradprobe could not {what}: {type(problem).__name__}: {problem}. The test's own "
        "result is unaffected; please report this to gradprobe."
    )


def _width(config: pytest.Config) -> int:
    try:
        width = int(config.get_terminal_writer().fullwidth)
    except Exception:  # noqa: BLE001 - no terminal (xdist worker): a fixed width
        return _FALLBACK_WIDTH
    return max(60, min(width, 160))
