"""Notebooks, through a real Jupyter kernel (nbclient): every report displays as HTML, the
IPython extension records cells and explains autograd errors in place, locations name cells;
a Graph and a Recording display through the interactive viewer, whose outputs, put side by
side in one page as JupyterLab does, render apart in headless Chromium.

One notebook runs once for the module (a kernel start and torch's import take seconds);
each test reads the outputs of its own cells, found by a marker comment on their first line.
"""

from __future__ import annotations

import html
import json
import re
import sys
from html.parser import HTMLParser
from typing import Any

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

CELLS: list[tuple[str, str]] = [
    ("setup", "import torch, gradprobe\nfrom gradprobe import hooks\ntorch.manual_seed(0)"),
    (
        "recording",
        (
            "with gradprobe.record() as rec:\n"
            "    x = torch.ones(2, 3, requires_grad=True)\n"
            "    y = x.sigmoid()\n"
            "    y.mul_(2)\n"
            "    try:\n"
            "        y.sum().backward()\n"
            "    except RuntimeError:\n"
            "        pass\n"
            "rec"
        ),
    ),
    ("print", "print(rec)"),
    ("finding", "rec.findings[0]"),
    (
        "check",
        (
            "a = torch.ones(3, requires_grad=True)\n"
            "b = a.sigmoid()\n"
            "b.add_(1)\n"
            "report = gradprobe.check(b.sum())\n"
            "report"
        ),
    ),
    (
        "model",
        (
            "model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), "
            "torch.nn.Linear(4, 1))\n"
            "model.add_module('<script>alert(1)</script>', torch.nn.Identity())\n"
            "model.register_parameter('[bold red]w', torch.nn.Parameter(torch.zeros(2)))\n"
            "data = torch.randn(8, 3)"
        ),
    ),
    ("graph", "graph = gradprobe.trace(model(data).sum(), model=model)\ngraph"),
    ("graph-again", "graph"),
    ("leaves", "gradprobe.leaf_report(model)"),
    (
        "inventory",
        (
            "handle = model[0].register_backward_hook(lambda module, gin, gout: None)\n"
            "model[2].register_forward_hook(lambda module, args, out: None)\n"
            "hooks.inventory(model)"
        ),
    ),
    (
        "timeline",
        "hooks.timeline(lambda: model(data).sum().backward(), model=model)",
    ),
    (
        "watch",
        (
            "handle.remove()\n"
            "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
            "with gradprobe.watch(model, optimizer=optimizer, sample_every=1) as session:\n"
            "    for _ in range(3):\n"
            "        optimizer.zero_grad()\n"
            "        model(data).pow(2).mean().backward()\n"
            "        optimizer.step()\n"
            "session"
        ),
    ),
    (
        "custom",
        (
            "def custom(shell, etype, value, tb, tb_offset=None):\n"
            "    print('custom handler saw', etype.__name__)\n"
            "get_ipython().set_custom_exc((ZeroDivisionError,), custom)"
        ),
    ),
    ("layout", "hooks.explain(torch.nn.Linear(3, 2))"),
    ("load", "%load_ext gradprobe"),
    (
        "magic-error",
        (
            "%%gradprobe kept\n"
            "p = torch.ones(2, 3, requires_grad=True)\n"
            "q = p.sigmoid()\n"
            "q.mul_(2)\n"
            "q.sum().backward()"
        ),
    ),
    ("kept", "[finding.code for finding in kept.findings]"),
    ("later-error", "z = torch.ones(2, requires_grad=True) * 2\nz.backward()"),
    ("other-error", "1 / 0"),
    ("magic-ok", "%%gradprobe\nw = torch.ones(2, requires_grad=True)\n(w * w).sum().item()"),
    ("unload", "%unload_ext gradprobe"),
    ("after-unload", "torch.ones(2, requires_grad=True).mul(2).backward()"),
    ("magic-gone", "%%gradprobe\n1"),
    ("custom-after-unload", "1 / 0"),
]
RAISES = {
    "magic-error",
    "later-error",
    "other-error",
    "after-unload",
    "magic-gone",
    "custom-after-unload",
}


@pytest.fixture(scope="module")
def executed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The notebook of CELLS run by a python3 kernel of this interpreter's environment."""
    notebook = nbformat.v4.new_notebook()
    for name, source in CELLS:
        cell = nbformat.v4.new_code_cell(source)
        cell.metadata["name"] = name
        if name in RAISES:
            cell.metadata["tags"] = ["raises-exception"]
        notebook.cells.append(cell)
    where = tmp_path_factory.mktemp("notebook")
    # A kernel spec of our own, so the kernel is this interpreter (with the gradprobe under
    # test) whatever kernels the machine or the user's profile have installed.
    spec = where / "jupyter" / "kernels" / "gradprobe-test"
    spec.mkdir(parents=True)
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    kernel = {"argv": argv, "display_name": "gradprobe test", "language": "python"}
    (spec / "kernel.json").write_text(json.dumps(kernel), encoding="utf-8")
    client = nbclient.NotebookClient(
        notebook,
        timeout=300,
        kernel_name="gradprobe-test",
        resources={"metadata": {"path": str(where)}},
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("JUPYTER_PATH", str(where / "jupyter"))
        patch.setenv("IPYTHONDIR", str(where / "ipython"))  # no user profile or startup files
        patch.setenv("JUPYTER_RUNTIME_DIR", str(where / "runtime"))
        client.execute()
    nbformat.validate(notebook)
    return {cell.metadata["name"]: cell for cell in notebook.cells}


def _html(cell: Any) -> list[str]:
    return [out["data"]["text/html"] for out in cell.outputs if "text/html" in out.get("data", {})]


def _text(cell: Any) -> str:
    parts = []
    for out in cell.outputs:
        if out["output_type"] == "stream":
            parts.append(out["text"])
        elif "text/plain" in out.get("data", {}):
            parts.append(out["data"]["text/plain"])
    return "".join(parts)


def _errors(cell: Any) -> list[Any]:
    return [out for out in cell.outputs if out["output_type"] == "error"]


class _Page(HTMLParser):
    """The tags and the text of an HTML fragment, as a browser would read them."""

    def __init__(self, fragment: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.text: list[str] = []
        self.feed(fragment)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    @property
    def plain(self) -> str:
        return " ".join(" ".join(self.text).split())


def _one_page(cell: Any) -> _Page:
    pages = _html(cell)
    assert len(pages) == 1, cell.outputs
    return _Page(pages[0])


def test_recording_shows_its_findings_as_html_with_cell_locations(executed: dict) -> None:
    cell = executed["recording"]
    page = _one_page(cell)
    assert "table" in page.tags
    number = cell.execution_count
    # the cause is the write, line 4 of this cell, named as the cell and with its source
    assert "gradprobe.record: 1 finding" in page.plain
    assert "GP101 inplace_modified_saved_tensor" in page.plain
    assert f"cause In [{number}], line 4 in <module> y.mul_(2)" in page.plain
    assert f"saved In [{number}], line 3 in <module> y = x.sigmoid()" in page.plain
    assert "ipykernel" not in page.plain  # not the temporary file the cell ran from
    assert _text(cell).startswith("<Recording ended")


def test_print_recording_has_each_code_and_cause_line(executed: dict) -> None:
    number = executed["recording"].execution_count
    text = _text(executed["print"])
    assert "GP101 inplace_modified_saved_tensor" in text
    cause = re.search(r"^  cause +(.*)\n +(.*)$", text, re.MULTILINE)
    assert cause is not None, text
    assert cause.groups() == (f"In [{number}], line 4 in <module>", "y.mul_(2)")


def test_finding_displays_as_html(executed: dict) -> None:
    (page,) = _html(executed["finding"])
    assert 'data-code="GP101"' in page
    parsed = _Page(page)
    assert "fix" in parsed.plain
    assert "docs gradprobe explain GP101" in parsed.plain


def test_check_report_displays_as_html(executed: dict) -> None:
    page = _one_page(executed["check"])
    assert "gradprobe.check: backward() would fail (1 finding)" in page.plain
    assert "GP101 inplace_modified_saved_tensor" in page.plain
    assert "node SigmoidBackward0" in page.plain


def test_leaf_report_is_a_table_and_escapes_names(executed: dict) -> None:
    (fragment,) = _html(executed["leaves"])
    page = _Page(fragment)
    table = fragment.split("</table>")[0]
    assert table.count("<tr") == 1 + 5  # header, 2 Linear layers x 2, the odd parameter
    # the reasons below the table, a grid in the terminal, a second table here
    assert page.tags.count("table") == 2
    assert "why .grad is None:" in page.plain
    assert "• [bold red]w, 0.weight, 0.bias, 2.weight, 2.bias" in page.plain
    assert "no backward() has reached it yet" in page.plain
    assert "[bold red]w" in page.plain  # rich markup in a name is shown as written
    assert "script" not in page.tags
    assert "<script>" not in fragment


def test_hook_inventory_displays_its_table_and_findings(executed: dict) -> None:
    cell = executed["inventory"]
    page = _one_page(cell)
    assert "table" in page.tags
    # the hooks' lambdas are defined on lines 1 and 2 of this cell
    number = cell.execution_count
    assert f"backward_legacy <lambda> In [{number}], line 1" in page.plain
    assert f"forward <lambda> In [{number}], line 2" in page.plain
    assert "GP301" in page.plain  # the legacy hook's finding, below the table


def test_hook_timeline_displays_every_call(executed: dict) -> None:
    page = _one_page(executed["timeline"])
    assert page.tags.count("tr") == 1 + 2  # header; the forward hook, then the legacy one
    assert re.search(r"0 forward forward 2 \(Linear\) <lambda> 1 backward", page.plain)


def test_watch_session_displays_findings_and_statistics(executed: dict) -> None:
    page = _one_page(executed["watch"])
    assert "watch Sequential (closed): 3 steps" in page.plain
    assert "parameter gradients at step" in page.plain
    assert "script" not in page.tags
    assert "<script>alert(1)</script>" in page.plain  # the module's name, as text


def test_hook_layout_displays_both_hooks(executed: dict) -> None:
    page = _one_page(executed["layout"])
    assert "register_backward_hook (legacy) grad_input, attached to AddmmBackward0" in page.plain
    assert "register_full_backward_hook grad_input" in page.plain
    assert page.tags.count("table") == 2


def test_magic_records_the_cell_shows_findings_then_the_traceback(executed: dict) -> None:
    cell = executed["magic-error"]
    kinds = [out["output_type"] for out in cell.outputs]
    assert kinds == ["display_data", "error"]  # findings first; no second explanation
    page = _Page(cell.outputs[0]["data"]["text/html"])
    number = cell.execution_count
    # line numbers of the cell as written: the %%gradprobe line is line 1
    assert f"cause In [{number}], line 4 in <module> q.mul_(2)" in page.plain
    assert f"In [{number}], line 4" in cell.outputs[0]["data"]["text/plain"]
    assert cell.outputs[1]["ename"] == "RuntimeError"
    assert _text(executed["kept"]).strip().startswith("['GP101'")


def test_later_autograd_error_is_explained_above_its_traceback(executed: dict) -> None:
    cell = executed["later-error"]
    assert [out["output_type"] for out in cell.outputs] == ["display_data", "error"]
    page = _Page(cell.outputs[0]["data"]["text/html"])
    assert "gradprobe explains this error:" in page.plain
    assert "GP105" in page.plain
    assert f"error In [{cell.execution_count}], line 2 in <module> z.backward()" in page.plain
    error = cell.outputs[1]
    assert error["ename"] == "RuntimeError"
    assert "grad can be implicitly created only for scalar outputs" in error["evalue"]
    # IPython colours the running expression inside the line (ANSI codes between its tokens)
    assert any("z.backward()" in _ANSI.sub("", line) for line in error["traceback"])


def test_other_errors_go_to_the_handler_installed_before(executed: dict) -> None:
    for name in ("other-error", "custom-after-unload"):
        cell = executed[name]
        assert [out["output_type"] for out in cell.outputs] == ["stream"], name
        assert _text(cell) == "custom handler saw ZeroDivisionError\n"


def test_magic_without_error_reports_nothing_and_returns_the_last_value(executed: dict) -> None:
    cell = executed["magic-ok"]
    assert [out["output_type"] for out in cell.outputs] == ["display_data", "execute_result"]
    assert (
        "gradprobe.record: nothing to report" in _Page(cell.outputs[0]["data"]["text/html"]).plain
    )
    assert cell.outputs[1]["data"]["text/plain"] == "2.0"


def test_unload_removes_the_magic_and_the_explanations(executed: dict) -> None:
    cell = executed["after-unload"]
    assert [out["output_type"] for out in cell.outputs] == ["error"]
    assert cell.outputs[0]["ename"] == "RuntimeError"
    gone = executed["magic-gone"]
    assert "Cell magic `%%gradprobe` not found" in _text(gone)
    assert not _html(gone)


# -- the interactive viewer ------------------------------------------------------------------

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_HOST = re.compile(
    r'<div class="gp-viewer-host" id="gp-viewer-([0-9a-f]+)"><div class="gp-fallback">'
)


def _result(cell: Any) -> dict[str, str]:
    (out,) = [out for out in cell.outputs if out["output_type"] == "execute_result"]
    data: dict[str, str] = out["data"]
    return data


def _viewer_data(page: str) -> dict[str, Any]:
    host = _HOST.search(page)
    assert host is not None, page[:300]
    uid = host.group(1)
    assert f'gradprobeViewer.mount(document.getElementById("gp-viewer-{uid}")' in page
    found = re.search(rf'<script type="application/json" id="gp-data-{uid}">(.*?)</script>', page)
    assert found is not None
    data: dict[str, Any] = json.loads(found.group(1))
    return data


def test_a_graph_displays_the_viewer_with_its_svg_inside_and_beside_it(executed: dict) -> None:
    shown = _result(executed["graph"])
    assert set(shown) == {"text/html", "image/svg+xml", "text/plain"}
    assert shown["text/plain"].startswith("<Graph ")
    page = shown["text/html"]
    data = _viewer_data(page)
    names = {leaf["name"] for leaf in data["leaves"].values()}
    assert {"0.weight", "0.bias", "2.weight", "2.bias"} <= names
    assert "<svg" in page[_HOST.search(page).end() :].split("<script")[0]  # type: ignore[union-attr]
    assert "<svg" in shown["image/svg+xml"]
    assert "<script>alert(1)" not in page  # the module's odd name stays data


def test_a_recording_displays_the_viewer_with_its_report_inside(executed: dict) -> None:
    cell = executed["recording"]
    page = _html(cell)[0]
    data = _viewer_data(page)
    (finding,) = data["findings"]
    cause = next(loc for loc in finding["locations"] if loc["role"] == "cause")
    assert (cause["name"], cause["line"], cause["text"]) == (
        f"In [{cell.execution_count}]",
        4,
        "y.mul_(2)",
    )
    fallback = page[_HOST.search(page).end() :].split("<script")[0]  # type: ignore[union-attr]
    assert "GP101 inplace_modified_saved_tensor" in _Page(fallback).plain
    assert set(_result(cell)) == {"text/html", "text/plain"}


def test_the_magic_shows_the_viewer_only_when_there_is_a_finding(executed: dict) -> None:
    assert _viewer_data(executed["magic-error"].outputs[0]["data"]["text/html"])["findings"]
    assert "gradprobeViewer" not in executed["magic-ok"].outputs[0]["data"]["text/html"]


# What JupyterLab does with a trusted text/html output: innerHTML into an output area, each
# script element replaced by a fresh copy, which the browser runs once the area is in the page.
_NOTEBOOK_PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>notebook</title></head>
<body><main id="notebook"></main>
<script>
for (const [name, html] of OUTPUTS) {
  const area = document.createElement("div");
  area.className = "jp-OutputArea-output";
  area.id = name;
  area.innerHTML = html;
  for (const old of Array.from(area.querySelectorAll("script"))) {
    const fresh = document.createElement("script");
    for (const attribute of Array.from(old.attributes)) {
      fresh.setAttribute(attribute.name, attribute.value);
    }
    fresh.textContent = old.textContent;
    old.replaceWith(fresh);
  }
  document.getElementById("notebook").appendChild(area);
}
</script></body></html>
"""

_SHOWN = """Object.fromEntries(Array.from(document.querySelectorAll(".jp-OutputArea-output"))
  .map(area => [area.id, {
    viewers: area.querySelectorAll(".gp-viewer").length,
    fallback: area.querySelectorAll(".gp-fallback").length,
    boxes: area.querySelectorAll(".gp-item").length,
    found: Array.from(area.querySelectorAll(".gp-found")).map(e => e.dataset.node),
    search: area.querySelector(".gp-search-input")?.value,
    details: area.querySelector(".gp-details")?.textContent,
  }]))"""


def _click(browser: Any, selector: str) -> None:
    """Scroll ``selector`` into view and click its centre, as a user would."""
    x, y = browser.run(
        f"(() => {{ const e = document.querySelector({json.dumps(selector)});"
        " e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect();"
        " return [r.x + r.width / 2, r.y + r.height / 2]; })()"
    )
    browser.click(x, y)


def test_outputs_side_by_side_render_their_own_viewers(executed: dict, tmp_path: Any) -> None:
    from _browser import browser as open_browser
    from _chromium import chromium

    if chromium() is None:
        pytest.skip("no system Chromium")
    outputs = [
        (name, _html(executed[cell])[0])
        for name, cell in (("a", "graph"), ("b", "graph-again"), ("c", "recording"))
    ]
    encoded = json.dumps(outputs).replace("<", "\\u003c")
    page = tmp_path / "notebook.html"
    page.write_text(_NOTEBOOK_PAGE.replace("OUTPUTS", encoded), encoding="utf-8")
    with open_browser() as browser:
        browser.open(page)
        before = browser.run(_SHOWN)
        assert browser.errors == []
        assert browser.requests == [page.resolve().as_uri()]  # nothing fetched
        for name in "abc":
            assert before[name]["viewers"] == 1, before
            assert before[name]["fallback"] == 0  # the viewer took its place
            assert before[name]["boxes"] > 0
        # one arrow marker per viewer, each viewer's edges pointing at its own
        markers = browser.run("Array.from(document.querySelectorAll('marker')).map(m => m.id)")
        assert len(set(markers)) == 3
        _click(browser, "#a .gp-search-input")
        browser.type("2.weight")
        after = browser.run(_SHOWN)
        assert after["a"]["search"] == "2.weight"
        assert len(after["a"]["found"]) == 1
        assert "2.weight" in after["a"]["details"]
        # the same graph's other viewer, and the recording's, did not move
        assert after["b"] == before["b"]
        assert after["c"] == before["c"]
        _click(browser, "#c .gp-finding")
        last = browser.run(_SHOWN)
        assert "GP101" in last["c"]["details"]
        assert last["a"] == after["a"] and last["b"] == before["b"]
        assert browser.errors == []


# -- the HTML renderer itself, without a kernel -------------------------------------------


def test_every_user_string_is_escaped() -> None:
    from gradprobe.findings import Location, make_finding

    evil = '<img src=x onerror="alert(1)">[bold red][/]'
    finding = make_finding(
        "GP101",
        message=evil,
        hint=evil,
        tensor=evil,
        module=evil,
        locations=[Location(evil, 3, "cause", evil, evil)],
    )
    fragment = finding._repr_html_()
    page = _Page(fragment)
    assert "img" not in page.tags
    # message, tensor, module, fix; the location's file, function and source text
    assert page.plain.count(evil) == 7
    assert html.escape(evil) in fragment
