"""What a notebook gets for a Graph and a Recording (``render.html.notebook_bundle``),
without a kernel or a browser: the viewer with a static view inside its host, the static
fallbacks beside it, host ids no two outputs share, and a size guard.

The same outputs run through a real kernel and are opened in Chromium side by side in
``tests/test_notebook.py``.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
import torch
from benchmarks import models
from torch import nn

import gradprobe
from gradprobe.graph import Graph
from gradprobe.render import html as render_html

_HOST = re.compile(r'<div class="gp-viewer-host" id="gp-viewer-([^"]+)"><div class="gp-fallback">')


def _net_graph() -> Graph:
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    return gradprobe.trace(net(torch.randn(5, 3)).sum(), model=net)


def _in_place_recording() -> Any:
    with gradprobe.record() as rec:
        x = torch.ones(2, 3, requires_grad=True)
        y = x.sigmoid()
        y.mul_(2)
        with pytest.raises(RuntimeError, match="inplace"):
            y.sum().backward()
    return rec


def _data(page: str) -> dict[str, Any]:
    found = re.search(r'<script type="application/json" id="gp-data-[^"]+">(.*?)</script>', page)
    assert found is not None, page[:300]
    data: dict[str, Any] = json.loads(found.group(1))
    return data


def _fallback(page: str) -> str:
    """The static view inside the viewer's host: what shows until (unless) the script runs."""
    start = _HOST.search(page)
    assert start is not None, page[:300]
    end = page.index('<script type="application/json"', start.end())
    return page[start.end() : end]


def _without_ids(page: str) -> str:
    return re.sub(r"gp-(viewer|data)-[0-9a-f]+", "gp-\\1-ID", page)


def test_a_recording_shows_the_viewer_with_its_findings_report_inside() -> None:
    rec = _in_place_recording()
    bundle = rec._repr_mimebundle_()
    assert set(bundle) == {"text/html", "text/plain"}
    assert bundle["text/plain"] == repr(rec)
    page = bundle["text/html"]
    report = _fallback(page)
    assert report.startswith(rec._report_html())  # the report as str() shows it
    assert "GP101" in report and "<table" in report
    data = _data(page)
    assert [f["code"] for f in data["findings"]] == ["GP101"]
    assert "SigmoidBackward0" in data["nodes"]["name"]
    assert "gradprobeViewer.mount(" in page
    # _repr_html_ is the same output (its host id aside)
    assert _without_ids(rec._repr_html_()) == _without_ids(page)


def test_a_graph_html_repr_is_its_bundles_html() -> None:
    graph = _net_graph()
    page = graph._repr_html_()
    assert _without_ids(page) == _without_ids(graph._repr_mimebundle_()["text/html"])
    assert "<svg" in _fallback(page)
    assert len(_data(page)["nodes"]["label"]) == len(graph)


def test_a_recording_still_running_or_without_ops_shows_its_report_alone() -> None:
    with gradprobe.record() as rec:
        running = rec._repr_mimebundle_()
    assert set(running) == {"text/html", "text/plain"}
    assert "gradprobeViewer" not in running["text/html"]
    assert "when the block ends" in running["text/html"]
    assert running["text/plain"].startswith("<Recording recording")
    assert rec._repr_mimebundle_()["text/html"] == rec._report_html()  # saw no autograd op
    assert "nothing to report" in rec._report_html()


def test_every_output_gets_its_own_host_id() -> None:
    graph = _net_graph()
    ids = [_HOST.search(graph._repr_mimebundle_()["text/html"]) for _ in range(3)]
    found = [match.group(1) for match in ids if match is not None]
    assert len(set(found)) == 3
    page = graph._repr_mimebundle_()["text/html"]
    uid = _HOST.search(page).group(1)  # type: ignore[union-attr]
    # the script mounts on its own host and reads its own data, by those ids only
    assert f'getElementById("gp-viewer-{uid}")' in page
    assert f'getElementById("gp-data-{uid}")' in page
    assert f'id="gp-data-{uid}"' in page


def test_data_too_large_for_a_notebook_shows_the_static_view_and_says_what_to_do(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    graph = _net_graph()
    rec = _in_place_recording()
    monkeypatch.setattr(render_html, "_NOTEBOOK_DATA", 100)
    bundle = graph._repr_mimebundle_()
    assert "gradprobeViewer" not in bundle["text/html"]
    assert "too large for a notebook output" in bundle["text/html"]
    assert "gradprobe.save_html(graph, &#x27;graph.html&#x27;)" in bundle["text/html"]
    assert "<svg" in bundle["text/html"] and "<svg" in bundle["image/svg+xml"]
    page = rec._repr_mimebundle_()["text/html"]
    assert "gradprobeViewer" not in page
    assert "gradprobe.save_html(rec, &#x27;run.html&#x27;)" in page
    assert rec._report_html() in page


def test_a_resnet50_shaped_graph_embeds_its_viewer_in_well_under_a_megabyte() -> None:
    model = models.resnet50_like()
    out = model(models.example_input("resnet50_like", batch=2, size=32))
    graph = gradprobe.trace(out.sum(), model=model)
    bundle = graph._repr_mimebundle_()
    assert "gradprobeViewer.mount(" in bundle["text/html"]
    assert len(_data(bundle["text/html"])["nodes"]["label"]) == len(graph)
    size = sum(len(value.encode()) for value in bundle.values())
    # a Jupyter server drops output above ~3 MB; today this is ~0.4 MB (viewer script
    # and style ~53 kB, data, and the SVG twice: inside the viewer's host and beside it)
    assert size < 1_000_000, size
