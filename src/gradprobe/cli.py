"""The ``gradprobe`` command line (also ``python -m gradprobe``).

User mistakes (a path that cannot be written, a script that is not a file) end with one
line on stderr and exit status 2, before anything runs; no traceback. ``--help`` and
``--version`` answer without importing torch.
"""

from __future__ import annotations

import argparse
import sys
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
    if args.command == "diagnose":
        for option, path, directory in (("--json", args.json, False), ("--svg", args.svg, True)):
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
                nproc_per_node=args.nproc_per_node,
            )
        except GradprobeError as error:
            print(_one_line(error), file=sys.stderr)
            return 2
    parser.print_help(sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
