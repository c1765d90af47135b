"""The interactive viewer's example page for docs/viewer.md, and a screenshot of it.

An in-place bug is run under ``gradprobe.record()``, its graph traced inside the block;
``save_html(graph, recording=rec)`` writes ``docs/images/viewer-inplace.html``. Where the system Chromium is
installed, ``viewer-inplace.png`` shows the page after a click on the finding. The page
carries the viewer's script and the script's paths, so only its presence is checked.
"""

from __future__ import annotations

import base64
import runpy
import sys
import tempfile
from pathlib import Path

import gradprobe

EXAMPLE = """\
import torch
from torch import nn

import gradprobe


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(4, 8)
        self.head = nn.Linear(8, 2)

    def forward(self, x):
        h = torch.sigmoid(self.encoder(x))  # sigmoid saves its output h
        h.mul_(2)  # and this writes over it
        return self.head(h)


torch.manual_seed(0)
net = Net()
loss = net(torch.randn(16, 4)).pow(2).mean()
graph = gradprobe.trace(loss, model=net)  # inside record(): versions at save time
try:
    loss.backward()
except RuntimeError:
    pass  # "modified by an inplace operation": the bug the page shows
"""

_TESTS = Path(__file__).resolve().parent.parent / "tests"
PAGE = "viewer-inplace.html"
SHOT = "viewer-inplace.png"


def _page(images: Path) -> Path:
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "train.py"
        script.write_text(EXAMPLE)
        with gradprobe.record() as rec:
            graph = runpy.run_path(str(script))["graph"]
        return gradprobe.save_html(
            graph, images / PAGE, recording=rec, title="gradprobe: an in-place bug"
        )


def _screenshot(page: Path, images: Path) -> Path | None:
    sys.path.insert(0, str(_TESTS))
    try:
        from _browser import browser
        from _chromium import chromium
    except ImportError:
        return None
    if chromium() is None:
        return None
    with browser(width=1200, height=640) as opened:
        opened.open(page)
        opened.run("document.querySelector('.gp-finding').click()")
        shot = opened.send("Page.captureScreenshot", {"format": "png"})
    target = images / SHOT
    target.write_bytes(base64.b64decode(shot["data"]))
    return target


def write_images(images: Path) -> list[Path]:
    page = _page(images)
    shot = _screenshot(page, images)
    return [page] if shot is None else [page, shot]


def stale_images(images: Path) -> list[Path]:
    return [images / name for name in (PAGE, SHOT) if not (images / name).exists()]
