"""Regenerate the real outputs shown in docs/ (``nox -s docs``); ``--check`` reports drift.

Each generated piece lives between ``<!-- gradprobe:NAME -->`` and ``<!-- /gradprobe:NAME -->``
markers in a Markdown page, or in docs/images/. Text and DOT are deterministic and checked
byte for byte; SVG depends on the layout engine (system dot or graphviz-pure), so the
check only requires it to exist and to come from the same DOT.

Topics add their own pieces in ``docs/gen_<topic>.py`` modules, found by name. Each may
define ``blocks() -> dict[str, str]`` (marker name -> Markdown body), and
``write_images(images: Path) -> list[Path]`` with ``stale_images(images: Path) -> list[Path]``
for pictures that cannot be compared byte for byte (PNG, SVG from a layout engine).
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import re
import sys
from collections.abc import Callable
from pathlib import Path

from rich.console import Console

import gradprobe
from gradprobe import demo

DOCS = Path(__file__).resolve().parent
IMAGES = DOCS / "images"
WIDTH = 88


def demo_report() -> tuple[str, gradprobe.Graph]:
    console = Console(width=WIDTH, record=True, color_system=None, file=io.StringIO())
    graph = demo.run(console)
    text = "\n".join(line.rstrip() for line in console.export_text().splitlines())
    return text.rstrip() + "\n", graph


def topics() -> list[object]:
    """The ``docs/gen_<topic>.py`` modules, imported, in name order."""
    found = []
    for path in sorted(DOCS.glob("gen_*.py")):
        spec = importlib.util.spec_from_file_location(f"docs_{path.stem}", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        found.append(module)
    return found


def demo_blocks() -> dict[str, str]:
    """The pieces this module makes itself (the demo's report), without the topics'."""
    report, _ = demo_report()
    return {"demo-report": f"```text\n{report}```\n"}


def blocks() -> dict[str, str]:
    """Marker name -> generated Markdown body."""
    generated = demo_blocks()
    for topic in topics():
        make = getattr(topic, "blocks", None)
        if make is not None:
            generated.update(make())
    return generated


def images() -> dict[str, str]:
    """File name under docs/images -> DOT text."""
    _, graph = demo_report()
    return {"demo.dot": gradprobe.to_dot(graph)}


def fill(page: str, generated: dict[str, str]) -> str:
    for name, body in generated.items():
        pattern = re.compile(
            rf"(<!-- gradprobe:{name} -->\n).*?(<!-- /gradprobe:{name} -->)", re.DOTALL
        )
        if not pattern.search(page):
            continue
        page = pattern.sub(lambda m, b=body: m.group(1) + b + m.group(2), page)
    return page


def drift() -> list[str]:
    """Files whose committed content differs from what the code produces now."""
    generated = blocks()
    stale = [
        str(page.relative_to(DOCS.parent))
        for page in sorted(DOCS.glob("*.md"))
        if fill(page.read_text(), generated) != page.read_text()
    ]
    for name, dot in images().items():
        path = IMAGES / name
        if not path.exists() or path.read_text() != dot:
            stale.append(str(path.relative_to(DOCS.parent)))
        svg = path.with_suffix(".svg")
        if not svg.exists():
            stale.append(str(svg.relative_to(DOCS.parent)))
    for topic in topics():
        check = getattr(topic, "stale_images", None)
        if check is not None:
            stale.extend(str(p.relative_to(DOCS.parent)) for p in check(IMAGES))
    return stale


def write(log: Callable[[str], None] = print) -> None:
    generated = blocks()
    for page in sorted(DOCS.glob("*.md")):
        text = fill(page.read_text(), generated)
        if text != page.read_text():
            page.write_text(text)
            log(f"updated {page.relative_to(DOCS.parent)}")
    IMAGES.mkdir(exist_ok=True)
    _, graph = demo_report()
    for name, dot in images().items():
        (IMAGES / name).write_text(dot)
        gradprobe.save_svg(graph, (IMAGES / name).with_suffix(".svg"))
        log(f"wrote docs/images/{name} and its SVG")
    for topic in topics():
        make_images = getattr(topic, "write_images", None)
        if make_images is not None:
            for path in make_images(IMAGES):
                log(f"wrote {path.relative_to(DOCS.parent)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report drift")
    args = parser.parse_args(argv)
    if args.check:
        stale = drift()
        for path in stale:
            print(f"out of date: {path} (run `nox -s docs`)")
        return 1 if stale else 0
    write()
    return 0


if __name__ == "__main__":
    sys.exit(main())
