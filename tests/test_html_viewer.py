"""The interactive viewer (``gradprobe.save_html``), in a real browser.

The pages are opened from disk in the system Chromium, headless, driven through the
DevTools protocol (``tests/_browser.py``): real mouse clicks and typed text, the page's
uncaught exceptions and console errors collected, every request it makes logged. The
browser tests skip cleanly where there is no Chromium (``.ci/run`` installs it from the OS
packages); the data tests run everywhere.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch
from torch import nn

import gradprobe
from gradprobe._layout import infer_modules
from gradprobe.cli import main
from gradprobe.errors import GradprobeTypeError
from gradprobe.graph import Edge, Graph, Leaf, Node
from gradprobe.render import html as render_html
from gradprobe.render._viewer_data import CAP, viewer_data

_chromium = pytest.importorskip("_chromium")
_browser = pytest.importorskip("_browser")

needs_browser = pytest.mark.skipif(_chromium.chromium() is None, reason="no system Chromium")


# -- models and graphs ------------------------------------------------------------------------


class InPlace(nn.Module):
    """sigmoid saves its result; the in-place ``mul_`` then overwrites it (GP101)."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.fc2 = nn.Linear(4, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.sigmoid(self.fc1(x))
        h.mul_(2)
        return self.fc2(h)


def _in_place_bug() -> tuple[Graph, Any]:
    torch.manual_seed(0)
    net = InPlace()
    with gradprobe.record() as rec:
        loss = net(torch.randn(5, 3)).sum()
        graph = gradprobe.trace(loss, model=net)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            loss.backward()
    return graph, rec


class Encoder(nn.Module):
    def __init__(self, layers: int = 6) -> None:
        super().__init__()
        layer = nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.fc = nn.Linear(16, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(self.encoder(x).mean(1))


def _encoder_graph() -> Graph:
    torch.manual_seed(0)
    model = Encoder()
    tokens = torch.randn(2, 5, 16)
    return gradprobe.trace(model(tokens).sum(), model=model, names={"tokens": tokens})


def _cnn_graph() -> Graph:
    torch.manual_seed(0)
    cnn = nn.Sequential()
    cnn.add_module("feature_extractor_convolution_stem", nn.Conv2d(3, 8, 3))
    cnn.add_module("feature_extractor_batch_normalization", nn.BatchNorm2d(8))
    cnn.add_module("activation", nn.ReLU())
    cnn.add_module("downsampling_convolution_with_long_name", nn.Conv2d(8, 16, 3, stride=2))
    cnn.add_module("global_average_pooling", nn.AdaptiveAvgPool2d(1))
    cnn.add_module("flatten", nn.Flatten())
    cnn.add_module("classification_head_linear_projection", nn.Linear(16, 10))
    images = torch.randn(2, 3, 16, 16)
    return gradprobe.trace(cnn(images).sum(), model=cnn, names={"images": images})


def _chain(length: int) -> Graph:
    """A hand-built graph of ``length`` ops in a row over one parameter, ``deep.weight``."""
    nodes = [
        Node(id=i, name="MulBackward0", kind="op", sequence_nr=length - i) for i in range(length)
    ]
    leaf = Leaf("deep.weight", "parameter", (3,), "float32", "cpu", True, True, False, False)
    nodes.append(
        Node(id=length, name="torch::autograd::AccumulateGrad", kind="accumulate_grad", leaf=leaf)
    )
    edges = [Edge(i, i + 1, 0, 0) for i in range(length)]
    return Graph(nodes=tuple(nodes), edges=tuple(edges), roots=())


def _page_data(page: str) -> dict[str, Any]:
    found = re.search(r'<script type="application/json" id="gp-data-[^"]*">(.*?)</script>', page)
    assert found is not None
    data: dict[str, Any] = json.loads(found.group(1))
    return data


# -- the page, without a browser ----------------------------------------------------------------


def test_the_page_is_one_file_that_loads_nothing() -> None:
    graph = _encoder_graph()
    page = render_html.to_html(graph)
    # no element loads anything: no src, no href, no import, no url()
    assert not re.search(r"\b(src|href)\s*=", page)
    assert "@import" not in page
    assert "url(" not in page.replace("url(#", "")
    assert "default-src 'none'" in page  # and the page forbids it anyway
    for asset in ("layout.js", "viewer.js", "panels.js", "viewer.css"):
        assert render_html._asset(asset) in page
    data = _page_data(page)
    assert len(data["nodes"]["label"]) == len(graph)
    assert len(data["edges"]) == 2 * len(graph.edges)
    names = {leaf["name"] for leaf in data["leaves"].values()}
    assert names == {leaf.name for leaf in graph.leaves}


def test_module_boxes_count_their_nodes_and_parameters() -> None:
    graph = _encoder_graph()
    groups = viewer_data(graph, title="t")["groups"]
    path = groups["path"]
    layer = path.index("encoder.layers.0")
    assert groups["params"][layer] == 12  # attention 4, two linears 4, two norms 4
    assert groups["size"][layer] == len(
        [m for m in infer_modules(graph) or () if m.startswith("encoder.layers.0")]
    )
    top = [g for g, parent in enumerate(groups["parent"]) if parent < 0]
    assert sum(groups["params"][g] for g in top) == len(graph.parameters)


def test_names_cannot_break_out_of_the_data_script() -> None:
    hostile = "</script><script>alert(1)</script><!--"
    leaf = Leaf(hostile, "input", (2,), "float32", "cpu", True, True, False, False)
    graph = Graph(
        nodes=(
            Node(id=0, name="SumBackward0", kind="op", sequence_nr=1),
            Node(id=1, name="torch::autograd::AccumulateGrad", kind="accumulate_grad", leaf=leaf),
        ),
        edges=(Edge(0, 1, 0, 0),),
        roots=(),
    )
    page = render_html.to_html(graph)
    assert hostile not in page
    assert page.count("</script>") == 2  # the data's and the viewer's own
    assert _page_data(page)["leaves"]["1"]["name"] == hostile


def test_a_100k_node_graph_opens_as_a_few_dozen_boxes_and_every_node_has_a_place() -> None:
    graph = _chain(100_000)
    data = viewer_data(graph, title="chain")
    groups = data["groups"]
    members: dict[int, int] = {}
    for group in [*data["nodes"]["group"], *groups["parent"]]:
        members[group] = members.get(group, 0) + 1
    assert max(members.values()) <= CAP  # no level, the top (-1) included, above CAP
    assert members[-1] <= CAP
    # parents come before children, so the viewer resolves the tree in one pass
    assert all(parent < index for index, parent in enumerate(groups["parent"]))
    size = [0] * len(groups["parent"])
    for group in data["nodes"]["group"]:
        while group >= 0:
            size[group] += 1
            group = groups["parent"][group]
    assert size == groups["size"]
    assert sum(s for s, p in zip(size, groups["parent"], strict=True) if p < 0) + sum(
        1 for g in data["nodes"]["group"] if g < 0
    ) == len(graph)


def test_a_findings_slice_lands_on_the_graph_it_was_traced_in() -> None:
    graph, rec = _in_place_bug()
    data = viewer_data(
        graph,
        title="t",
        findings=rec.findings,
        lines={key: record.line for key, record in rec._events.nodes.items()},
    )
    (finding,) = [f for f in data["findings"] if f["code"] == "GP101"]
    sigmoid = graph.find("SigmoidBackward0")[0].id
    assert finding["problem"] == [sigmoid]
    assert sigmoid in finding["nodes"]
    assert "saved at v0, now v1" in finding["marks"][0][2]
    (row,) = data["saved"][str(sigmoid)]
    assert row[0] == "result" and (row[2], row[3], row[4]) == (1, 0, 1)  # now v1, saved v0
    line = data["lines"][data["nodes"]["line"][sigmoid]]
    assert line[3] == "h = torch.sigmoid(self.fc1(x))"


def test_a_trace_inside_record_knows_each_saved_tensors_version_at_save_time() -> None:
    # what the viewer's saved-tensor table and the finding's slice stand on
    graph, _rec = _in_place_bug()
    (saved,) = graph.find("SigmoidBackward0")[0].saved
    assert (saved.version_saved, saved.version_now, saved.stale) == (0, 1, True)


def test_a_recording_shows_its_recorded_nodes_with_lines() -> None:
    _graph, rec = _in_place_bug()
    data = _page_data(rec.to_html())
    labels = data["nodes"]["label"]
    ops = [label for node, label in enumerate(labels) if str(node) not in data["leaves"]]
    assert sorted(ops) == sorted(["Addmm", "T", "Sigmoid", "Mul", "Addmm", "T", "Sum"])
    # the recorder keeps no leaves: those of the finding's slice are added, with their reader
    leaves = {data["leaves"][node]["name"]: int(node) for node in data["leaves"]}
    assert set(leaves) == {"fc1.weight", "fc1.bias"}
    pairs = zip(data["edges"][::2], data["edges"][1::2], strict=True)  # (input, reader)
    readers = {labels[reader] for source, reader in pairs if source in leaves.values()}
    assert readers == {"T", "Addmm"}  # weight through its transpose, bias directly
    (finding,) = [f for f in data["findings"] if f["code"] == "GP101"]
    assert [labels[i] for i in finding["problem"]] == ["Sigmoid"]
    texts = {row[3] for row in data["lines"]}
    assert "h.mul_(2)" in texts
    sigmoid = labels.index("Sigmoid")
    (row,) = data["saved"][str(sigmoid)]
    assert row[0] == "result" and (row[2], row[3], row[4]) == (1, 0, 1)  # stale: v0 -> v1
    assert not any(
        r[4] for node, rows in data["saved"].items() for r in rows if node != str(sigmoid)
    )


def test_a_recording_groups_its_nodes_by_the_backward_call_they_fed() -> None:
    torch.manual_seed(0)
    net = nn.Linear(3, 1)
    with gradprobe.record() as rec:
        for _ in range(3):
            net(torch.randn(4, 3)).pow(2).mean().backward()
    data = _page_data(rec.to_html())
    groups = data["groups"]
    assert groups["path"] == ["backward 1", "backward 2", "backward 3"]
    assert groups["size"] == [4, 4, 4]  # T, Addmm, Pow, Mean each time
    assert data["summary"] == "12 recorded nodes, 3 backward calls, 0 findings"
    by_group = {
        g: sorted(
            data["nodes"]["pos"][n] for n, owner in enumerate(data["nodes"]["group"]) if owner == g
        )
        for g in range(3)
    }
    assert max(by_group[0]) < min(by_group[1]) and max(by_group[1]) < min(by_group[2])


class Detached(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Linear(3, 3)
        self.head = nn.Linear(3, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.body(x).detach())  # body never gets a gradient (GP107)


def test_a_recording_shows_the_parameters_its_findings_say_got_no_gradient() -> None:
    torch.manual_seed(0)
    net = Detached()
    with gradprobe.record() as rec:
        net(torch.randn(4, 3)).sum().backward()
    data = _page_data(rec.to_html())
    (finding,) = [f for f in data["findings"] if f["code"] == "GP107"]
    names = {data["leaves"][str(node)]["name"] for node in finding["problem"]}
    assert names == {"body.weight", "body.bias"}
    assert set(finding["problem"]) <= set(finding["nodes"])  # highlighted and framed
    assert "detach()" in finding["missing"][0]["reason"]


def test_wrong_inputs_say_what_was_passed(tmp_path: Path) -> None:
    graph = _chain(3)
    with pytest.raises(GradprobeTypeError, match=r"got 42 \(a int\)"):
        gradprobe.save_html(42, tmp_path / "x.html")
    with pytest.raises(GradprobeTypeError, match=r"watch\(\) session"):
        gradprobe.save_html(graph, tmp_path / "x.html", watch="session")
    with pytest.raises(GradprobeTypeError, match="record"):
        gradprobe.save_html(graph, tmp_path / "x.html", recording=graph)
    with pytest.raises(GradprobeTypeError, match="file path"):
        gradprobe.save_html(graph, 3.5)  # type: ignore[arg-type]
    assert not list(tmp_path.iterdir())


def test_a_notebook_gets_the_viewer_with_the_svg_inside_and_beside_it() -> None:
    graph = _cnn_graph()
    bundle = graph._repr_mimebundle_()
    assert set(bundle) == {"text/html", "image/svg+xml", "text/plain"}
    assert "<svg" in bundle["image/svg+xml"]
    fallback = re.search(r'<div class="gp-fallback">(.*?)</div>', bundle["text/html"], re.DOTALL)
    assert fallback is not None and "<svg" in fallback.group(1)
    assert "gradprobeViewer.mount" in bundle["text/html"]
    other = graph._repr_mimebundle_()["text/html"]
    assert re.findall(r'id="gp-viewer-([^"]+)"', other) != re.findall(
        r'id="gp-viewer-([^"]+)"', bundle["text/html"]
    )  # two outputs of one notebook never share element ids


# -- in the browser ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if _chromium.chromium() is None:
        pytest.skip("no system Chromium")
    with _browser.browser() as opened:
        yield opened


def _open(browser: Any, path: Path) -> None:
    browser.errors.clear()
    browser.requests.clear()
    browser.open(path)
    assert browser.run("!!document.querySelector('.gp-viewer .gp-item')")
    assert browser.errors == []
    assert browser.requests == [path.resolve().as_uri()]  # nothing but the page itself


def _centre(browser: Any, selector: str) -> tuple[float, float]:
    """Where to click ``selector``; first "Fit" (as a user would) if it is off screen."""
    script = (
        f"(() => {{ const r = document.querySelector({json.dumps(selector)})"
        ".getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2, "
        "r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth]; })()"
    )
    box = browser.run(script)
    if not box[2]:
        browser.click(*_centre(browser, ".gp-button-fit"))
        box = browser.run(script)
    return float(box[0]), float(box[1])


_OVERFLOWS = """
Array.from(document.querySelectorAll('.gp-item')).flatMap(item => {
  const box = item.querySelector('rect').getBBox();
  return Array.from(item.querySelectorAll('text')).map(text => {
    const t = text.getBBox();
    return {text: text.textContent, over: Math.max(box.x - t.x, t.x + t.width - box.x - box.width,
      box.y - t.y, t.y + t.height - box.y - box.height)};
  });
})
"""


_PROBE = """(() => { const c = document.createElement('canvas').getContext('2d');
  c.font = '100px Helvetica'; return c.measureText('abcdefghijklmnopqrstuvwxyz0123456789').width;
})()"""


@needs_browser
@pytest.mark.parametrize("setup", _chromium.FONT_SETUPS)
def test_labels_stay_inside_their_boxes_with_either_font(tmp_path: Path, setup: str) -> None:
    if not _chromium.fonts_for(setup):
        pytest.skip(f"fonts of {setup!r} not installed")
    (tmp_path / "cache").mkdir()
    config = tmp_path / "fonts.conf"
    config.write_text(_chromium._fontconfig(setup, tmp_path / "cache"))
    with _browser.browser(env={"FONTCONFIG_FILE": str(config)}) as browser:
        for index, graph in enumerate([_cnn_graph(), _encoder_graph()]):
            path = gradprobe.save_html(graph, tmp_path / f"g{index}.html")
            _open(browser, path)
            probe = browser.run(_PROBE)  # the set-up's font is the one in use
            low, high = _chromium._PROBE[setup]
            assert low <= probe <= high
            browser.run("document.querySelector('.gp-button-collapse').click()")
            for group in range(3):  # open a few modules, whose boxes hold long names
                found = browser.run(
                    f"!!document.querySelector('.gp-group[data-group=\"{group}\"]')"
                )
                if found:
                    browser.click(*_centre(browser, f'.gp-group[data-group="{group}"]'))
            rows = browser.run(_OVERFLOWS)
            assert len(rows) >= 10
            assert [row for row in rows if row["over"] > 0.5] == []
            assert browser.errors == []


@needs_browser
def test_the_wheel_zooms_about_the_pointer_and_a_drag_pans(browser: Any, tmp_path: Path) -> None:
    graph, _rec = _in_place_bug()
    path = gradprobe.save_html(graph, tmp_path / "bug.html")
    _open(browser, path)
    box = f'.gp-item[data-node="{graph.find("SigmoidBackward0")[0].id}"]'
    x, y = _centre(browser, box)
    width = browser.run(f"document.querySelector({json.dumps(box)}).getBoundingClientRect().width")
    browser.wheel(x, y, -300)  # zoom in on the box: it grows and stays under the pointer
    assert (
        browser.run(f"document.querySelector({json.dumps(box)}).getBoundingClientRect().width")
        > 1.3 * width
    )
    assert _centre(browser, box) == pytest.approx((x, y), abs=1.0)
    browser.drag((x + 200, y + 100), (x + 120, y + 60))  # from empty space
    assert _centre(browser, box) == pytest.approx((x - 80, y - 40), abs=1.0)
    assert browser.run("document.querySelector('.gp-details h3').textContent").startswith(
        "Graph"
    )  # a drag is not a click: nothing was selected
    assert browser.errors == []


@needs_browser
def test_search_finds_a_parameter_inside_a_collapsed_module(browser: Any, tmp_path: Path) -> None:
    graph = _encoder_graph()
    path = gradprobe.save_html(graph, tmp_path / "encoder.html")
    _open(browser, path)
    name = "encoder.layers.5.linear2.weight"
    (target,) = [node.id for node in graph.nodes if node.leaf and node.leaf.name == name]
    assert not browser.run(f"!!document.querySelector('[data-node=\"{target}\"]')")  # hidden
    browser.click(*_centre(browser, ".gp-search-input"))
    browser.type(name)
    found = browser.run(
        "Array.from(document.querySelectorAll('.gp-found')).map(e => e.dataset.node)"
    )
    assert found == [str(target)]
    assert browser.run("document.querySelector('.gp-details h3').textContent") == name
    # and the box is on screen
    x, y = _centre(browser, ".gp-found")
    width, height = browser.run("[innerWidth, innerHeight]")
    assert 0 < x < width and 0 < y < height
    assert browser.errors == []


@needs_browser
def test_a_collapsed_module_expands_on_click_and_collapses_again(
    browser: Any, tmp_path: Path
) -> None:
    path = gradprobe.save_html(_encoder_graph(), tmp_path / "encoder.html")
    _open(browser, path)
    collapsed = browser.run(
        "Array.from(document.querySelectorAll('.gp-module')).map(e => "
        "[e.dataset.group, e.querySelector('text').textContent])"
    )
    assert collapsed, "the initial view should keep some layers collapsed"
    group, module = collapsed[-1]
    before = browser.run("document.querySelectorAll('.gp-node').length")
    browser.click(*_centre(browser, f'.gp-module[data-group="{group}"]'))
    assert not browser.run(f"!!document.querySelector('.gp-item[data-group=\"{group}\"]')")
    names = browser.run(
        "Array.from(document.querySelectorAll('.gp-node text.gp-bold')).map(t => t.textContent)"
    )
    assert any(name.startswith(module + ".") for name in names)
    assert browser.run("document.querySelectorAll('.gp-node').length") > before
    label = f'.gp-cluster[data-group="{group}"] .gp-cluster-label'
    browser.click(*_centre(browser, label))
    assert browser.run(f"!!document.querySelector('.gp-item[data-group=\"{group}\"]')")
    assert browser.errors == []


@needs_browser
def test_a_finding_highlights_its_slice(browser: Any, tmp_path: Path) -> None:
    graph, rec = _in_place_bug()
    path = gradprobe.save_html(graph, tmp_path / "bug.html", recording=rec)
    _open(browser, path)
    data = _page_data(path.read_text())
    index = next(i for i, f in enumerate(data["findings"]) if f["code"] == "GP101")
    assert not browser.run("!!document.querySelector('.gp-problem')")
    browser.click(*_centre(browser, f'.gp-finding[data-finding="{index}"]'))
    problem = browser.run(
        "Array.from(document.querySelectorAll('.gp-item.gp-problem')).map(e => +e.dataset.node)"
    )
    assert problem == [graph.find("SigmoidBackward0")[0].id]
    in_slice = browser.run(
        "Array.from(document.querySelectorAll('.gp-item.gp-slice')).map(e => +e.dataset.node)"
    )
    assert sorted(in_slice) == data["findings"][index]["nodes"]
    outside = browser.run(
        "Array.from(document.querySelectorAll('.gp-item:not(.gp-slice)')).map(e => "
        "getComputedStyle(e).opacity)"
    )
    assert outside and set(outside) == {"0.25"}  # the rest is dimmed
    details = browser.run("document.querySelector('.gp-details').textContent")
    assert "saved at v0, now v1" in details and "h.mul_(2)" in details
    assert browser.errors == []


@needs_browser
def test_a_click_on_a_node_shows_its_line_and_saved_versions(browser: Any, tmp_path: Path) -> None:
    graph, rec = _in_place_bug()
    path = gradprobe.save_html(graph, tmp_path / "bug.html", recording=rec)
    _open(browser, path)
    sigmoid = graph.find("SigmoidBackward0")[0].id
    browser.click(*_centre(browser, f'.gp-item[data-node="{sigmoid}"]'))
    details = browser.run("document.querySelector('.gp-details').innerText")
    assert "h = torch.sigmoid(self.fc1(x))" in details
    assert "test_html_viewer.py:" in details
    row = browser.run(
        "Array.from(document.querySelectorAll('.gp-saved tr.gp-stale-row td'))"
        ".map(td => td.textContent)"
    )
    assert row[0] == "result" and row[2] == "v0" and row[3].startswith("v1")
    assert browser.errors == []


@needs_browser
def test_watched_gradients_show_on_their_parameter(browser: Any, tmp_path: Path) -> None:
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    with gradprobe.watch(net, sample_every=1) as session:
        for _ in range(3):
            loss = net(torch.randn(8, 3)).pow(2).mean()
            loss.backward()
    graph = gradprobe.trace(net(torch.randn(8, 3)).sum(), model=net)
    path = gradprobe.save_html(graph, tmp_path / "watched.html", watch=session)
    _open(browser, path)
    (weight,) = [n.id for n in graph.nodes if n.leaf and n.leaf.name == "0.weight"]
    browser.click(*_centre(browser, f'.gp-item[data-node="{weight}"]'))
    rows = browser.run(
        "Array.from(document.querySelectorAll('.gp-stats tr')).slice(1).map(tr => "
        "Array.from(tr.children).map(td => td.textContent))"
    )
    norms = [g.stats.norm for r in session.history for g in r.gradients if g.name == "0.weight"]
    assert len(rows) == len(norms) >= 3
    assert [float(row[1]) for row in rows] == pytest.approx(norms, rel=1e-3)
    assert browser.run("!!document.querySelector('.gp-spark path')")
    assert browser.errors == []


@needs_browser
def test_a_100k_node_graph_opens_and_search_expands_lazily(browser: Any, tmp_path: Path) -> None:
    path = gradprobe.save_html(_chain(100_000), tmp_path / "chain.html")
    _open(browser, path)
    shown = browser.run("document.querySelectorAll('.gp-item').length")
    assert shown <= CAP
    browser.click(*_centre(browser, ".gp-search-input"))
    browser.type("deep.weight")
    assert browser.run("document.querySelector('.gp-found text').textContent") == "deep.weight"
    # only the chunks on the way were opened: a few hundred boxes, not 100,000
    assert browser.run("document.querySelectorAll('.gp-item').length") <= 4 * CAP
    assert browser.errors == []


@needs_browser
def test_the_notebook_output_falls_back_to_svg_without_javascript(
    browser: Any, tmp_path: Path
) -> None:
    bundle = _cnn_graph()._repr_mimebundle_()
    path = tmp_path / "cell.html"
    path.write_text(
        f"<!DOCTYPE html><html><head><meta charset='utf-8'></head><body>{bundle['text/html']}"
        "</body></html>",
        encoding="utf-8",
    )
    _open(browser, path)
    assert not browser.run("!!document.querySelector('.gp-fallback')")
    browser.send("Emulation.setScriptExecutionDisabled", {"value": True})
    try:
        browser.open(path)
        assert browser.run("!!document.querySelector('.gp-fallback svg g.node')")
        assert not browser.run("!!document.querySelector('.gp-viewer')")
    finally:
        browser.send("Emulation.setScriptExecutionDisabled", {"value": False})


# -- the command line ---------------------------------------------------------------------------

_SCRIPT = """
import pathlib, torch
pathlib.Path(__file__).with_name("ran").write_text("yes")
x = torch.randn(4, 3, requires_grad=True)
h = torch.sigmoid(x)
h.mul_(2)
h.sum().backward()
"""


def test_diagnose_refuses_an_unwritable_html_path_before_running(tmp_path: Path) -> None:
    script = tmp_path / "bug.py"
    script.write_text(_SCRIPT)
    status = main(["diagnose", "--html", str(tmp_path / "missing" / "v.html"), str(script)])
    assert status == 2
    assert not (tmp_path / "ran").exists()


@needs_browser
def test_diagnose_html_writes_a_viewer_whose_finding_highlights_its_slice(
    browser: Any, tmp_path: Path
) -> None:
    script = tmp_path / "bug.py"
    script.write_text(_SCRIPT)
    out = tmp_path / "report.html"
    status = main(["diagnose", "--html", str(out), str(script)])
    assert status == 1  # the script's own status: backward raised
    _open(browser, out)
    browser.click(*_centre(browser, '.gp-finding[data-finding="0"]'))
    problem = browser.run(
        "Array.from(document.querySelectorAll('.gp-item.gp-problem text')).map(t => t.textContent)"
    )
    assert problem == ["Sigmoid", "stale saved tensor"]  # the recorded versions say so too
    assert "h.mul_(2)" in browser.run("document.querySelector('.gp-details').textContent")
    assert browser.errors == []
