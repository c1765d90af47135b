"""record() beside other threads: no crash, each recording sees only its own thread, and
overlapping blocks in two threads leave torch exactly as it was.

Each scenario runs ``_threads_script.py`` in a subprocess with a timeout: a crash (a
signal, "free(): corrupted unsorted chunks") or a hang fails the test instead of taking
pytest down or blocking it.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

SCRIPT = Path(__file__).with_name("_threads_script.py")
REPEATS = int(os.environ.get("GRADPROBE_THREAD_REPEATS", "3"))  # more: a slower, surer run
TIMEOUT = 120


def _env() -> dict[str, str]:
    env = dict(os.environ)
    src = str(Path(__file__).resolve().parent.parent / "src")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH")) if p)
    env["OMP_NUM_THREADS"] = "1"
    return env


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env=_env(),
        check=False,
    )


def _scenario(name: str, steps: int = 300) -> dict[str, Any]:
    done = _run(str(SCRIPT), name, str(steps))
    assert done.returncode == 0, (
        f"exit code {done.returncode} (negative: killed by a signal)\n{done.stderr[-3000:]}"
    )
    last = done.stdout.strip().splitlines()[-1]
    data: dict[str, Any] = json.loads(last)
    return data


def _lines(findings: list[dict[str, Any]]) -> set[int]:
    return {line for f in findings for file, line in f["lines"] if file == SCRIPT.name}


def _codes(findings: list[dict[str, Any]]) -> set[str]:
    return {f["code"] for f in findings}


@pytest.mark.parametrize("attempt", range(REPEATS))
def test_recorded_thread_beside_plain_thread(attempt: int) -> None:
    data = _scenario("one")
    result, marks = data["result"], data["lines"]
    assert result["errors"] == []
    found = result["recorded"]
    assert marks["BUG_A"] in _lines(found)
    assert "GP107" in _codes(found)
    plain = {marks[tag] for tag in marks if tag.startswith("PLAIN_")}
    assert not (_lines(found) & plain), found


@pytest.mark.parametrize("attempt", range(REPEATS))
def test_two_recorded_threads_see_only_their_own(attempt: int) -> None:
    data = _scenario("two")
    result, marks = data["result"], data["lines"]
    assert result["errors"] == []
    cut, stale = result["cut"], result["stale"]
    assert marks["BUG_A"] in _lines(cut)
    assert marks["BUG_B"] in _lines(stale)
    assert "GP107" in _codes(cut)
    assert "GP134" in _codes(stale)
    assert "GP134" not in _codes(cut), cut
    assert marks["BUG_B"] not in _lines(cut)
    assert marks["BUG_A"] not in _lines(stale)


def _check_overlap(data: dict[str, Any], raising: bool) -> None:
    result, marks = data["result"], data["lines"]
    for order, report in result.items():
        assert report["changed"] == [], f"exit order {order}: still patched {report['changed']}"
        assert report["not_scanned"] == [], order  # the scan covers gradprobe's patch table
        assert report["patched"] > 50, order  # and the table was read while both ran
        assert report["tables_after"] == report["tables_before"], order
        assert all(count == 0 for count in report["tables_after"].values()), report
        assert report["modes_left"] == {"A": 0, "B": 0}, order
        assert report["errors"] == [], order
        assert marks["BUG_A"] in _lines(report["A"]), (order, report["A"])
        assert marks["BUG_B"] in _lines(report["B"]), (order, report["B"])
        assert marks["BUG_B"] not in _lines(report["A"]), order
        assert marks["BUG_A"] not in _lines(report["B"]), order
        if raising:  # the user's own error is no finding about gradients
            assert marks["USER_RAISE"] not in _lines(report["A"]) | _lines(report["B"])


def test_overlapping_blocks_restore_torch() -> None:
    _check_overlap(_scenario("overlap", 20), raising=False)


def test_overlapping_blocks_that_raise_restore_torch() -> None:
    _check_overlap(_scenario("raise", 20), raising=True)


def test_diagnose_ignores_a_background_thread(tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    done = _run("-m", "gradprobe", "diagnose", "--json", str(out), str(SCRIPT), "diagnose", "200")
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(out.read_text())
    assert report["exit_code"] == 0, report
    findings = report["findings"]
    marks: dict[str, int] = {}
    for number, text in enumerate(SCRIPT.read_text().splitlines(), 1):
        if "# " in text:
            tag = text.rsplit("# ", 1)[1].split(":")[0].strip()
            if tag.isupper():
                marks.setdefault(tag, number)
    lines = {
        loc["line"]
        for f in findings
        for loc in f.get("locations", [])
        if str(loc.get("file", "")).endswith(SCRIPT.name)
    }
    assert marks["BUG_A"] in lines, findings
    plain = {marks[tag] for tag in marks if tag.startswith("PLAIN_")}
    assert not (lines & plain), findings


# -- the pieces, in process --------------------------------------------------------------------


def test_shared_patches_undo_in_install_order_whatever_the_release_order() -> None:
    from gradprobe._patch import SharedPatches

    class Target:
        def f(self) -> str:
            return "f"

    original = Target.__dict__["f"]

    def wrap(tag: str) -> SharedPatches:
        def install(patches: Any) -> None:
            inner = Target.f

            def f(self: Target) -> str:
                return tag + inner(self)

            patches.set(Target, "f", f)

        return SharedPatches(install)

    first, second = wrap("1"), wrap("2")
    first.acquire()
    first.acquire()  # a second user: installed once
    second.acquire()
    assert Target().f() == "21f"
    first.release()
    first.release()  # no user left, but the set above still calls it: stays in place
    assert first.installed
    assert Target().f() == "21f"
    second.release()
    assert not first.installed and not second.installed
    assert Target.__dict__["f"] is original
    second.release()  # one release too many does nothing
    assert Target.__dict__["f"] is original


def test_patches_leave_a_value_put_over_theirs() -> None:
    from gradprobe._patch import Patches

    class Target:
        pass

    patches = Patches()
    patches.set(Target, "x", 1)
    Target.x = 2  # type: ignore[attr-defined]  # somebody else's, over ours
    patches.undo()
    assert Target.x == 2  # type: ignore[attr-defined]
    patches = Patches()
    patches.set(Target, "y", 1)
    patches.undo()
    assert "y" not in vars(Target)


def test_thread_bound_items_are_per_thread_and_lent_to_autograd_workers() -> None:
    import _thread
    import threading

    from gradprobe import _threads

    bound: _threads.ThreadBound[str] = _threads.ThreadBound()
    holder = bound.add("mine")
    seen: dict[str, tuple[str, ...]] = {}
    done = threading.Event()

    def foreign(key: str) -> None:  # a thread Python did not start, like autograd's
        seen[key] = bound.here()
        done.set()

    def python_thread() -> None:
        seen["python"] = bound.here()

    try:
        assert bound.here() == ("mine",)
        _thread.start_new_thread(foreign, ("idle",))
        assert done.wait(10)
        done.clear()
        _threads.backward_started()
        try:
            _thread.start_new_thread(foreign, ("in backward",))
            assert done.wait(10)
            thread = threading.Thread(target=python_thread)
            thread.start()
            thread.join()
        finally:
            _threads.backward_ended()
    finally:
        bound.remove(holder, "mine")
    assert seen == {"idle": (), "in backward": ("mine",), "python": ()}
    assert bound.here() == ()


def test_node_creation_hook_is_entered_once_for_overlapping_threads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """torch >= 2.14's hook, faked: one install for two threads' overlapping blocks, removed
    by the last; a hook that never fires leaves each recording walking the graph."""
    import threading
    from collections.abc import Iterator
    from contextlib import contextmanager

    import torch

    import gradprobe

    record_module = importlib.import_module("gradprobe._record")  # gradprobe.record: the function

    calls: list[str] = []

    @contextmanager
    def fake_hook(hook: Any) -> Iterator[None]:
        calls.append("enter")
        try:
            yield
        finally:
            calls.append("exit")

    monkeypatch.setattr(record_module, "_CREATION_HOOK", fake_hook)
    both_in = threading.Barrier(2, timeout=30)
    hooked: list[bool] = []
    codes: list[list[str]] = []

    def run() -> None:
        layer = torch.nn.Linear(3, 1)
        with gradprobe.record() as rec:
            both_in.wait()
            assert rec._mode is not None
            hooked.append(rec._mode.hooked)
            x = torch.ones(2, 3, requires_grad=True)
            y = x.sigmoid()
            y.data.zero_()
            layer(y).sum().backward()
            both_in.wait()
        codes.append([f.code for f in rec.findings])

    threads = [threading.Thread(target=run) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert calls == ["enter", "exit"]
    assert hooked == [False, False]
    assert codes == [["GP108"], ["GP108"]]
