"""The ``gradprobe`` command line (also ``python -m gradprobe``).

User mistakes (a path that cannot be written, a script that is not a file, an unknown
finding code) end with one line on stderr and exit status 2, before anything runs; no
traceback. ``--help``, ``--version`` and ``explain`` answer without importing torch.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    return _parsers()[0]


def _parsers() -> tuple[argparse.ArgumentParser, argparse.ArgumentParser]:
    """The command line's parser, and its ``diagnose`` subparser."""
    from gradprobe import __version__

    parser = argparse.ArgumentParser(
        prog="gradprobe",
        description="See, explain and test what PyTorch's autograd does.",
    )
    parser.add_argument("--version", action="version", version=f"gradprobe {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    demo = commands.add_parser(
        "demo",
        help="trace a small model with a real autograd mistake and explain it",
        description="Trace a classifier whose .detach() cuts its feature layers out of the "
        "graph, print the report and write the graph as SVG.",
    )
    demo.add_argument(
        "--svg",
        type=Path,
        default=Path("gradprobe-demo.svg"),
        metavar="PATH",
        help="where to write the graph (default: %(default)s)",
    )
    demo.add_argument("--no-svg", action="store_true", help="do not render the graph")
    diagnose = commands.add_parser(
        "diagnose",
        help="run a script unchanged and explain what went wrong in autograd",
        description="Run SCRIPT as __main__ (like `python SCRIPT ARGS`) under the recorder, "
        "print the findings to stderr and exit with the script's own status.",
    )
    diagnose.add_argument(
        "--json", type=Path, metavar="PATH", help="also write the findings as JSON to PATH"
    )
    diagnose.add_argument(
        "--svg",
        type=Path,
        metavar="DIR",
        help="also draw each finding as DIR/<code>-<n>.svg (the graph around the problem)",
    )
    diagnose.add_argument(
        "--sarif",
        type=Path,
        metavar="PATH",
        help="also write the findings as SARIF 2.1.0 to PATH (GitHub code scanning, editors)",
    )
    diagnose.add_argument(
        "--html",
        type=Path,
        metavar="PATH",
        help="also write an interactive viewer of the recorded graph and findings to PATH "
        "(one self-contained HTML file)",
    )
    diagnose.add_argument(
        "--nproc-per-node",
        type=int,
        metavar="N",
        help="start N workers with torch's launcher (torchrun --standalone), each recorded; "
        "one merged report",
    )
    diagnose.add_argument("script", metavar="SCRIPT", help="the Python script to run")
    diagnose.add_argument(
        "args",
        nargs=argparse.REMAINDER,
        metavar="ARGS",
        help="arguments for the script (gradprobe's own options go before SCRIPT)",
    )
    explain = commands.add_parser(
        "explain",
        help="print the page of a finding code (GP101), or list every code",
        description="Print what a finding code means and how to fix it: the page that "
        "`diagnose`, record() and the JSON and SARIF reports point to. Without CODE, list "
        "every code.",
    )
    explain.add_argument(
        "code", nargs="?", metavar="CODE", help="a code (GP101, gp101, 101) or a kind (dead_relu)"
    )
    return parser, diagnose


def _demo(svg: Path | None) -> int:
    from rich.console import Console

    from gradprobe import demo
    from gradprobe.errors import GradprobeError

    try:
        demo.run(Console(highlight=False), svg)
    except (GradprobeError, OSError) as error:
        print(f"gradprobe demo: {_one_line(error)}", file=sys.stderr)
        return 1
    return 0


def _explain(query: str | None) -> int:
    """``gradprobe explain [CODE]``: the code's page (rendered in a terminal, Markdown in a
    pipe), or every code with its kind and title."""
    from gradprobe import _pages

    codes = _pages.page_codes()
    if not codes:
        print(
            "gradprobe explain: the finding pages are not installed with this gradprobe "
            "(gradprobe/_docs/findings is missing); reinstall it.",
            file=sys.stderr,
        )
        return 2
    if query is None:
        try:
            _list_codes(codes)
            sys.stdout.flush()
        except BrokenPipeError:  # `gradprobe explain | head`: the reader has enough
            _quiet_stdout()
        return 0
    code = _pages.lookup(query)
    page = None if code is None else _pages.page(code)
    if page is None:
        close = _pages.suggestions(query)
        hint = f"did you mean {_or(close)}? " if close else "codes look like GP101 or dead_relu; "
        print(
            f"gradprobe explain: no finding code {query!r}; {hint}"
            "`gradprobe explain` lists them all.",
            file=sys.stderr,
        )
        return 2
    from rich.console import Console

    text = _pages.terminal_text(page)
    console = Console(highlight=False)
    try:
        if console.is_terminal:
            from rich.markdown import Markdown  # its parser only when it renders

            console.print(Markdown(text))
        else:
            sys.stdout.write(text)
            sys.stdout.flush()
    except BrokenPipeError:
        _quiet_stdout()
    return 0


def _quiet_stdout() -> None:
    """After the reader of a pipe left: nothing more to say, and no complaint from the
    interpreter when it flushes stdout on exit."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _or(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} or {items[-1]}"


def _list_codes(codes: Sequence[str]) -> None:
    """One entry per code, its title on an indented second line: any width fits, and
    nothing is cut."""
    from gradprobe._codes import BUILTIN_CODES

    width = max(40, shutil.get_terminal_size().columns)
    known = {entry.code: entry for entry in BUILTIN_CODES}
    for code in codes:
        entry = known.get(code)
        print(f"{code}  {entry.kind}" if entry else code)
        if entry is not None:
            print(
                textwrap.fill(entry.title, width, initial_indent=" " * 7, subsequent_indent=" " * 7)
            )


def _one_line(error: BaseException) -> str:
    text = " ".join(str(error).split())
    return text or type(error).__name__


def _bad_path(command: str, option: str, path: Path, *, directory: bool = False) -> str | None:
    """The one-line complaint about an output file (or ``directory``) that cannot be
    written, if it cannot."""
    from gradprobe._paths import unwritable, unwritable_dir

    problem = unwritable_dir(path) if directory else unwritable(path)
    if problem is None:
        return None
    return f"gradprobe {command}: cannot write {option} {path}: {problem}; nothing was run."


def _late_options(diagnose: argparse.ArgumentParser, script: str, args: Sequence[str]) -> None:
    """Warn about gradprobe options written after the script name: Python's own rule
    (everything after the script is the script's) hands them to the script."""
    ours = {
        option
        for action in diagnose._actions
        for option in action.option_strings
        if option not in ("-h", "--help")
    }
    for arg in args:
        if arg == "--":
            break
        option = arg.split("=", 1)[0]
        if option in ours:
            print(
                f"gradprobe diagnose: warning: {option} comes after the script name, so it "
                f"went to {script}, not to gradprobe; put gradprobe's options before it: "
                f"gradprobe diagnose {option} ... {script} ...",
                file=sys.stderr,
            )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser, diagnose_parser = _parsers()
    args = parser.parse_args(argv)
    if args.command == "demo":
        svg = None if args.no_svg else args.svg
        problem = None if svg is None else _bad_path("demo", "--svg", svg)
        if problem is not None:
            print(problem, file=sys.stderr)
            return 2
        return _demo(svg)
    if args.command == "explain":
        return _explain(args.code)
    if args.command == "diagnose":
        for option, path, directory in (
            ("--json", args.json, False),
            ("--svg", args.svg, True),
            ("--sarif", args.sarif, False),
            ("--html", args.html, False),
        ):
            problem = (
                None if path is None else _bad_path("diagnose", option, path, directory=directory)
            )
            if problem is not None:
                print(problem, file=sys.stderr)
                return 2
        _late_options(diagnose_parser, args.script, args.args)

        from gradprobe.diagnose import diagnose
        from gradprobe.errors import GradprobeError

        try:
            return diagnose(
                args.script,
                args.args,
                json_path=args.json,
                svg_dir=args.svg,
                sarif_path=args.sarif,
                html_path=args.html,
                nproc_per_node=args.nproc_per_node,
            )
        except GradprobeError as error:
            print(_one_line(error), file=sys.stderr)
            return 2
    parser.print_help(sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
