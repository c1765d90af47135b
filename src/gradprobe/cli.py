"""The ``gradprobe`` command line (also ``python -m gradprobe``)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
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
    diagnose.add_argument("script", metavar="SCRIPT", help="the Python script to run")
    diagnose.add_argument(
        "args", nargs=argparse.REMAINDER, metavar="ARGS", help="arguments for the script"
    )
    return parser


def _demo(svg: Path | None) -> int:
    from rich.console import Console

    from gradprobe import demo

    demo.run(Console(highlight=False), svg)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args = _parser().parse_args(argv)
    if args.command == "demo":
        return _demo(None if args.no_svg else args.svg)
    if args.command == "diagnose":
        from gradprobe.diagnose import diagnose
        from gradprobe.errors import GradprobeError

        try:
            return diagnose(args.script, args.args, json_path=args.json, svg_dir=args.svg)
        except GradprobeError as error:
            print(error, file=sys.stderr)
            return 2
    _parser().print_help(sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
