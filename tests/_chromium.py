"""Measure SVG labels in a real browser: the system Chromium, headless, with chosen fonts.

Graphviz sizes each box for the font metrics it assumes; a viewer draws the text with the
font it actually has. This module loads SVGs into Chromium with a fontconfig file that
leaves it exactly one family of fonts, lets the page measure every ``<text>`` against the
box that should hold it (``getBBox()``, real glyph advances) and reads the numbers back
from ``--dump-dom``. No browser is downloaded: only ``chromium``/``chromium-browser`` from
the OS packages (``apt-get install chromium fonts-dejavu-core fonts-liberation2``).

Font set-ups (:data:`FONT_SETUPS`):

- ``"dejavu"``: DejaVu Sans only, with Helvetica, Arial and sans-serif mapped onto it, as
  on a Linux machine or container without Liberation/Nimbus fonts;
- ``"helvetica"``: Liberation Sans only (the metrics of Helvetica and Arial), with
  Helvetica, DejaVu Sans and sans-serif mapped onto it, as on a Mac.

Run as a script to print the overflows of SVG files::

    python tests/_chromium.py dejavu graph.svg other.svg
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

__all__ = ["FONT_SETUPS", "Overflow", "chromium", "fonts_for", "measure"]

_FONT_DIRS = {
    "dejavu": ("DejaVu Sans", ("/usr/share/fonts/truetype/dejavu",)),
    "helvetica": (
        "Liberation Sans",
        ("/usr/share/fonts/truetype/liberation2", "/usr/share/fonts/truetype/liberation"),
    ),
}
FONT_SETUPS = tuple(_FONT_DIRS)
_PROBE = {"dejavu": (2050.0, 2150.0), "helvetica": (1790.0, 1870.0)}
_ALIASES = ("Helvetica", "Arial", "DejaVu Sans", "Liberation Sans", "sans-serif", "Times")

# Runs in the page: every text of a node, cluster or edge label against its box.
_SCRIPT = """
const out = [];
document.querySelectorAll('svg').forEach((svg, index) => {
  svg.querySelectorAll('g.node, g.cluster').forEach(group => {
    const shape = group.querySelector('path, polygon, ellipse, rect');
    if (!shape) return;
    const box = shape.getBBox();
    group.querySelectorAll('text').forEach(text => {
      const t = text.getBBox();
      const over = Math.max(box.x - t.x, t.x + t.width - (box.x + box.width),
                            box.y - t.y, t.y + t.height - (box.y + box.height));
      out.push({svg: index, group: group.querySelector('title').textContent,
                cls: group.getAttribute('class'), text: text.textContent,
                over: Math.round(over * 100) / 100});
    });
  });
});
const ctx = document.createElement('canvas').getContext('2d');
ctx.font = '100px Helvetica';
const probe = ctx.measureText('abcdefghijklmnopqrstuvwxyz0123456789').width;
document.getElementById('result').textContent = JSON.stringify({probe: probe, rows: out});
"""


@dataclass(frozen=True)
class Overflow:
    """One label measured: ``over`` is how far (SVG units) its text sticks out of its box
    (negative: the room left on its tightest side)."""

    svg: int
    group: str
    cls: str
    text: str
    over: float


def chromium() -> str | None:
    """The system Chromium executable, or None."""
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


def fonts_for(setup: str) -> bool:
    """Whether the fonts of ``setup`` are installed."""
    _family, dirs = _FONT_DIRS[setup]
    return any(Path(d).is_dir() and any(Path(d).glob("*.ttf")) for d in dirs)


def _fontconfig(setup: str, cache: Path) -> str:
    family, dirs = _FONT_DIRS[setup]
    aliases = "\n".join(
        f"  <alias binding='same'><family>{name}</family><prefer><family>{family}</family>"
        "</prefer></alias>"
        for name in _ALIASES
    )
    folders = "\n".join(f"  <dir>{d}</dir>" for d in dirs if Path(d).is_dir())
    return (
        "<?xml version='1.0'?>\n<!DOCTYPE fontconfig SYSTEM 'fonts.dtd'>\n<fontconfig>\n"
        f"{folders}\n  <cachedir>{cache}</cachedir>\n{aliases}\n</fontconfig>\n"
    )


def measure(svgs: list[str], setup: str, *, timeout: float = 60.0) -> list[Overflow]:
    """Every label of ``svgs`` (SVG documents) measured in Chromium with the fonts of
    ``setup``, one :class:`Overflow` per ``<text>`` of a node or cluster."""
    browser = chromium()
    if browser is None:
        msg = "no system Chromium (apt-get install chromium)"
        raise RuntimeError(msg)
    with tempfile.TemporaryDirectory(prefix="gp-chromium-") as tmp:
        folder = Path(tmp)
        (folder / "cache").mkdir()
        config = folder / "fonts.conf"
        config.write_text(_fontconfig(setup, folder / "cache"))
        body = "\n".join(re.sub(r"^<\?xml[^>]*>|<!DOCTYPE[^>]*>", "", svg) for svg in svgs)
        page = folder / "page.html"
        page.write_text(
            "<!DOCTYPE html><html><head><meta charset='utf-8'></head><body>"
            f"{body}<pre id='result'></pre><script>{_SCRIPT}</script></body></html>",
            encoding="utf-8",
        )
        env = dict(os.environ, FONTCONFIG_FILE=str(config), HOME=str(folder))
        done = subprocess.run(
            [
                browser,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--no-first-run",
                f"--user-data-dir={folder / 'profile'}",
                "--dump-dom",
                page.as_uri(),
            ],
            capture_output=True,
            timeout=timeout,
            env=env,
            check=False,
        )
    dom = done.stdout.decode("utf-8", errors="replace")
    found = re.search(r"<pre id=\"result\">(.*?)</pre>", dom, re.DOTALL)
    if done.returncode != 0 or found is None or not found.group(1):
        msg = f"Chromium failed ({done.returncode}): {done.stderr.decode(errors='replace')[-2000:]}"
        raise RuntimeError(msg)
    result = json.loads(html.unescape(found.group(1)))
    # The page must really have drawn with the set-up's font: 'Helvetica' at 10 px is
    # 2100 px wide for this probe in DejaVu Sans, 1829 px in Liberation Sans.
    low, high = _PROBE[setup]
    if not low <= result["probe"] <= high:
        msg = f"font set-up {setup!r} not in effect: probe text {result['probe']:.1f} px wide"
        raise RuntimeError(msg)
    rows = result["rows"]
    return [
        Overflow(row["svg"], row["group"], row["cls"], row["text"], float(row["over"]))
        for row in rows
    ]


if __name__ == "__main__":
    setup, *paths = sys.argv[1:]
    rows = measure([Path(p).read_text(encoding="utf-8") for p in paths], setup)
    bad = [row for row in rows if row.over > 0.5]
    for row in bad:
        print(f"{paths[row.svg]} {row.group} +{row.over:.2f}: {row.text!r}")
    print(f"{len(bad)} of {len(rows)} labels overflow ({setup})")
