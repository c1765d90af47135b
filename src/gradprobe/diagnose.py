"""``gradprobe diagnose [--json PATH] [--svg DIR] [--sarif PATH] [--html PATH] SCRIPT
[ARGS...]``: run a script, explain it.

The script runs as ``__main__`` with ``sys.argv = [SCRIPT, *ARGS]`` and its directory
first on ``sys.path``, exactly like ``python SCRIPT ARGS``, inside :func:`gradprobe.record`.
Its output is untouched; the findings go to stderr as a rich report, and to ``PATH`` as
JSON when asked. The exit status is the script's own: 0, its ``sys.exit`` code, or 1 after
an uncaught exception (whose traceback is printed first, as Python would). With ``--svg
DIR``, each finding's picture (``finding.to_svg()``) is written to ``DIR/GP101-0.svg``:
its code and its index among the findings of that code. With ``--sarif PATH``, the findings
are also written as a SARIF 2.1.0 log (``gradprobe._sarif``) for GitHub code scanning and
editors. With ``--html PATH``, the interactive viewer of what the recording saw
(``gradprobe.save_html``) is written to PATH: the recorded graph, grouped by backward call,
each node with its line, and the findings, a click on one highlighting its slice.

JSON shape::

    {"gradprobe": VERSION, "script": ABS_PATH, "argv": [...], "exit_code": N,
     "error": null | {"type": "RuntimeError", "message": "..."},
     "findings": [finding.to_dict(), ...]}
"""

from __future__ import annotations

import json
import os
import runpy
import sys
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from gradprobe._paths import unwritable, unwritable_dir
from gradprobe._record import record
from gradprobe._source import is_gradprobe_file
from gradprobe.errors import UNPRINTABLE, GradprobeValueError, error_text
from gradprobe.findings import Finding

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["Diagnosis", "diagnose", "diagnose_script"]


@dataclass(frozen=True)
class Diagnosis:
    """The outcome of running one script under the recorder."""

    script: str
    argv: tuple[str, ...]
    exit_code: int
    error: BaseException | None
    findings: tuple[Finding, ...]
    # what the recording could not observe (Recording.notes): not problems
    notes: tuple[Finding, ...] = ()
    recording: Any = field(default=None, compare=False, repr=False)
    """The finished :class:`~gradprobe.Recording` (plain data: no tensor, no frame)."""
    ranks: tuple[int, ...] = ()
    """The ranks of a distributed run whose processes recorded (empty for one process);
    each finding's ``details["ranks"]`` says on which of them it was found."""
    deferred: bool = False
    """A worker of a distributed run whose report another process merges and prints."""

    def to_dict(self) -> dict[str, Any]:
        """The JSON document (see the module docstring)."""
        from gradprobe import __version__

        error = None
        if self.error is not None and not isinstance(self.error, SystemExit):
            error = {
                "type": type(self.error).__name__,
                "message": error_text(self.error, UNPRINTABLE),
            }
        return {
            "gradprobe": __version__,
            "script": self.script,
            "argv": list(self.argv),
            "exit_code": self.exit_code,
            "error": error,
            "findings": [self._finding_dict(finding) for finding in self.findings],
            "notes": [note.to_dict() for note in self.notes],
            **({"ranks": list(self.ranks)} if self.ranks else {}),
        }

    def _finding_dict(self, finding: Finding) -> dict[str, Any]:
        data = finding.to_dict()
        if self.ranks:
            data["ranks"] = list(finding.details.get("ranks", []))
        return data


def diagnose_script(script: str | os.PathLike[str], args: Sequence[str] = ()) -> Diagnosis:
    """Run ``script`` as ``__main__`` under :func:`gradprobe.record`; never raises for the
    script's own errors (they are in the result).

    Raises:
        GradprobeValueError: ``script`` is not a readable Python file.
    """
    path = Path(script)
    if not path.is_file():
        msg = (
            f"gradprobe diagnose: {str(script)!r} is not a file. Give the path of a Python "
            "script, e.g. gradprobe diagnose train.py --epochs 1"
        )
        raise GradprobeValueError(msg)
    path = path.resolve()
    from gradprobe._distributed.follow import Follow

    follow = Follow()  # the workers the script starts record too
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    sys.argv = [str(script), *args]
    sys.path.insert(0, str(path.parent))
    error: BaseException | None = None
    exit_code = 0
    recording = record()
    # The script's globals stay alive until its recording has concluded: findings about
    # its model and optimizer need them.
    namespace: dict[str, Any] = {}
    try:
        with recording:
            namespace = runpy.run_path(str(path), run_name="__main__")
            recording.inspect_globals(namespace)
    except SystemExit as stop:
        error = stop
        exit_code = _exit_status(stop.code)
    except KeyboardInterrupt as stop:
        error = stop
        exit_code = 130
    except BaseException as raised:  # noqa: BLE001  (the script's error is the result)
        error = raised
        exit_code = 1
        _print_script_error(raised)
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path
    namespace.clear()
    findings, notes = tuple(recording.findings), tuple(recording.notes)
    merged = follow.finish(findings, error)
    if merged is None:
        deferred = follow.worker or follow.torchrun is not None
        return Diagnosis(
            str(path), tuple(args), exit_code, error, findings, notes, recording, deferred=deferred
        )
    ranks = merged.ranks if merged.processes > 1 or follow.torchrun is not None else ()
    return Diagnosis(
        str(path), tuple(args), exit_code, error, merged.findings, notes, recording, ranks=ranks
    )


def diagnose_torchrun(
    script: str | os.PathLike[str], args: Sequence[str] = (), *, nproc_per_node: int
) -> Diagnosis:
    """Run ``script`` on ``nproc_per_node`` workers started by torch's launcher
    (``torch.distributed.run --standalone``), each under ``gradprobe diagnose``; one
    merged result.

    Raises:
        GradprobeValueError: ``script`` is not a file, or ``nproc_per_node`` is not a
            positive number.
    """
    path = Path(script)
    if not path.is_file():
        msg = (
            f"gradprobe diagnose: {str(script)!r} is not a file. Give the path of a Python "
            "script, e.g. gradprobe diagnose --nproc-per-node 2 train.py"
        )
        raise GradprobeValueError(msg)
    if (
        isinstance(nproc_per_node, bool)
        or not isinstance(nproc_per_node, int)
        or (nproc_per_node < 1)
    ):
        msg = (
            f"gradprobe diagnose: --nproc-per-node must be a whole number of workers, 1 or "
            f"more; got {nproc_per_node!r}."
        )
        raise GradprobeValueError(msg)
    from gradprobe._distributed.launch import torchrun

    status, merged = torchrun(path.resolve(), args, nproc_per_node)
    return Diagnosis(
        str(path.resolve()), tuple(args), status, None, merged.findings, ranks=merged.ranks
    )


def _print_script_error(error: BaseException) -> None:
    """The script's traceback as ``python SCRIPT`` prints it: without the frames of
    gradprobe and runpy that ran it (torch's own frames stay, as Python shows them)."""
    report = traceback.TracebackException.from_exception(error)
    seen: set[int] = set()
    pending = [report]
    while pending:
        part = pending.pop()
        if id(part) in seen:
            continue
        seen.add(id(part))
        part.stack = traceback.StackSummary.from_list(
            [frame for frame in part.stack if not _runner_frame(frame.filename)]
        )
        pending.extend(p for p in (part.__cause__, part.__context__) if p is not None)
    sys.stderr.write("".join(report.format()))


def _runner_frame(filename: str) -> bool:
    return filename.startswith("<frozen runpy") or is_gradprobe_file(filename)


def _exit_status(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    sys.stderr.write(f"{code}\n")  # as the interpreter does for sys.exit('message')
    return 1


def diagnose(
    script: str | os.PathLike[str],
    args: Sequence[str] = (),
    *,
    json_path: str | os.PathLike[str] | None = None,
    svg_dir: str | os.PathLike[str] | None = None,
    stream: TextIO | None = None,
    sarif_path: str | os.PathLike[str] | None = None,
    html_path: str | os.PathLike[str] | None = None,
    nproc_per_node: int | None = None,
) -> int:
    """The ``gradprobe diagnose`` command: run, report to ``stream`` (stderr), write JSON,
    SARIF and pictures; returns the script's exit status (or 2 if it succeeded but a report
    could not be written).

    Raises:
        GradprobeValueError: ``json_path``, ``sarif_path`` or ``html_path`` cannot be
            written, ``svg_dir`` cannot be made or written into, or ``script`` is not a file;
            checked before the script runs.
    """
    directory = _picture_dir(svg_dir)
    from rich.console import Console
    from rich.text import Text

    from gradprobe.render.findings import findings_view

    if json_path is not None:
        problem = unwritable(json_path)
        if problem is not None:
            msg = (
                f"gradprobe diagnose: cannot write the JSON report to {str(json_path)!r}: "
                f"{problem}; nothing was run."
            )
            raise GradprobeValueError(msg)
    if html_path is not None:
        problem = unwritable(html_path)
        if problem is not None:
            msg = (
                f"gradprobe diagnose: cannot write the viewer to --html {str(html_path)!r}: "
                f"{problem}; nothing was run."
            )
            raise GradprobeValueError(msg)
    _check_sarif_path(sarif_path)
    root = Path.cwd()  # SARIF paths: the source tree around where gradprobe was started
    if nproc_per_node is None:
        result = diagnose_script(script, args)
    else:
        result = diagnose_torchrun(script, args, nproc_per_node=nproc_per_node)
    if result.deferred:  # a worker: the merged report comes from another process
        return result.exit_code
    console = Console(file=stream or sys.stderr, highlight=False)
    heading = f"gradprobe diagnose {Path(result.script).name}"
    if result.ranks:
        heading += f" ({len(result.ranks)} ranks)"
    if len(heading) + 6 <= console.width:
        # Text, not a str: a script named train[v2].py is shown as named, not as markup
        console.rule(Text(heading, style="rule.text"))
    else:  # a rule would cut the script's name
        console.print(heading, style="bold", markup=False)
    failed = result.error is not None and result.exit_code != 0
    if failed and not result.findings:
        console.print(
            f"The script failed ({type(result.error).__name__}, exit status "
            f"{result.exit_code}); gradprobe found no autograd problem behind it.",
            style="yellow",
        )
    else:
        console.print(findings_view(result.findings, ok_text="gradprobe found nothing wrong"))
    for note in result.notes:
        console.print(f"note {note.code}: {note.message}", style="dim", markup=False)
    if json_path is not None:
        try:
            Path(json_path).write_text(json.dumps(result.to_dict(), indent=2) + "\n")
        except OSError as error:  # checked before the run; the disk changed since
            console.print(
                f"gradprobe diagnose: could not write the JSON report to {str(json_path)!r}: "
                f"{error.strerror or error}",
                style="red",
                markup=False,
            )
            return result.exit_code or 2
    if sarif_path is not None and not _write_sarif(result, sarif_path, root, console):
        return result.exit_code or 2
    if directory is not None:
        from gradprobe.render.picture import write_pictures

        written = write_pictures(result.findings, directory)
        console.print(
            f"{len(written)} picture{'s' if len(written) != 1 else ''} in {directory}", markup=False
        )
    if html_path is not None:
        from gradprobe.render.html import save_html

        try:
            save_html(result.recording, html_path, title=f"gradprobe diagnose {Path(script).name}")
        except OSError as error:  # checked before the run; the disk changed since
            console.print(
                f"gradprobe diagnose: could not write the viewer to {str(html_path)!r}: "
                f"{error.strerror or error}",
                style="red",
                markup=False,
            )
            return result.exit_code or 2
        console.print(f"viewer in {html_path}", markup=False)
    return result.exit_code


def _picture_dir(svg_dir: str | os.PathLike[str] | None) -> Path | None:
    if svg_dir is None:
        return None
    problem = unwritable_dir(svg_dir)
    if problem is not None:
        msg = (
            f"gradprobe diagnose: cannot write pictures into --svg {str(svg_dir)!r}: {problem}; "
            "nothing was run. Give a directory for the pictures (it is created if missing)."
        )
        raise GradprobeValueError(msg)
    return Path(svg_dir)


def _check_sarif_path(sarif_path: str | os.PathLike[str] | None) -> None:
    problem = None if sarif_path is None else unwritable(sarif_path)
    if problem is not None:
        msg = (
            f"gradprobe diagnose: cannot write the SARIF report to {str(sarif_path)!r}: "
            f"{problem}; nothing was run."
        )
        raise GradprobeValueError(msg)


def _write_sarif(
    result: Diagnosis, sarif_path: str | os.PathLike[str], root: Path, console: Console
) -> bool:
    from gradprobe._sarif import source_root, write_sarif

    try:
        write_sarif(result, sarif_path, root=source_root(root))
    except OSError as error:  # checked before the run; the disk changed since
        console.print(
            f"gradprobe diagnose: could not write the SARIF report to {str(sarif_path)!r}: "
            f"{error.strerror or error}",
            style="red",
            markup=False,
        )
        return False
    return True
