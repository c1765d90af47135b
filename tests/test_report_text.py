"""print() of the report objects is their plain-text report, and their truthiness does
not depend on what they found (Recording, CheckReport, WatchSession)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from torch import nn

import gradprobe
from gradprobe.render.findings import finding_rows


def _line_of(text: str) -> int:
    """The line number in this file of the first line containing ``text``."""
    lines = Path(__file__).read_text().splitlines()
    return next(n for n, line in enumerate(lines, 1) if text in line and "_line_of" not in line)


def _data_write_recording() -> gradprobe.Recording:
    with gradprobe.record() as rec:
        x = torch.ones(3, requires_grad=True)
        y = x.sigmoid()
        _ = y.data.zero_()  # the write autograd cannot see
        y.sum().backward()
    return rec


def test_print_of_a_recording_shows_each_findings_code_title_and_cause_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", "400")  # no wrapping: one line per row
    rec = _data_write_recording()
    (finding,) = rec.findings
    text = str(rec)
    lines = text.splitlines()
    assert lines[0] == "gradprobe.record: 1 finding"
    assert lines[1] == f"{finding.code} {finding.kind} — {finding.title}"
    assert finding.code == "GP108"
    cause = lines.index(
        f"  cause  {__file__}:{_line_of('the write autograd cannot see')} in _data_write_recording"
    )
    assert lines[cause + 1].strip() == "_ = y.data.zero_()  # the write autograd cannot see"
    assert f"  fix    {finding.hint}" in lines
    assert f"  what   {finding.message}" in lines
    # every row the rich panel shows is in the text, in the same order
    labels = [line.split()[0] for line in lines[2:] if not line.startswith("         ")]
    assert labels == [label for label, _ in finding_rows(finding)]


def test_print_of_an_empty_or_running_recording_says_so() -> None:
    with gradprobe.record() as rec:
        assert str(rec).startswith("gradprobe.record: still recording")
        torch.ones(2, requires_grad=True).sum().backward()
    assert str(rec) == "gradprobe.record: nothing to report"


def test_every_report_object_is_true_whatever_it_found() -> None:
    empty = gradprobe.record()
    with empty:
        pass
    assert empty.findings == [] and len(empty) == 0
    assert bool(empty) is True  # `if rec:` must not silently skip a clean recording
    found = _data_write_recording()
    assert len(found) == 1 and bool(found) is True

    x = torch.ones(3, requires_grad=True)
    clean = gradprobe.check((x * x).sum())
    assert clean.ok and bool(clean) is True
    saved = x * 2
    loss = (saved * saved).sum()
    saved.mul_(2)  # MulBackward0 saved it
    failing = gradprobe.check(loss)
    assert not failing.ok and bool(failing) is True

    model = nn.Linear(2, 1)
    session = gradprobe.watch(model)
    assert bool(session) is True
    session.close()
    assert session.findings() == [] and bool(session) is True


def test_print_of_a_check_report_lists_its_findings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "400")
    x = torch.ones(3, requires_grad=True)
    y = x * 2
    loss = (y * y).sum()
    y.add_(1)
    report = gradprobe.check(loss)
    (finding,) = report.findings
    lines = str(report).splitlines()
    assert lines[0] == "gradprobe.check: backward() would fail (1 finding)"
    assert lines[1] == f"GP101 {finding.kind} — {finding.title}"
    assert f"  node    {finding.node}" in lines
    clean = gradprobe.check((x * x).sum())
    assert str(clean) == "gradprobe.check: ok, backward() should run (3 nodes checked)"


def test_print_of_a_watch_session_is_its_report_in_80_columns(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    with gradprobe.watch(model, sample_every=1) as session:
        out = model(torch.ones(2, 3))
        out.sum().backward()
    lines = str(session).splitlines()
    assert lines[0] == (
        "watch Sequential (closed): 1 step, full statistics every step; no findings"
    )
    assert max(len(line) for line in lines) <= 80
    table = lines.index("parameter gradients at step 0, worst first")
    rows = {
        line.split()[0]: line.split()
        for line in lines[table + 2 :]
        if line.strip() and not line.strip().startswith(("─", "parameter"))
    }
    # the last layer's bias gradient is d(sum)/d(bias) = batch size = 2
    assert rows["2.bias"][2] == "2"
    assert set(rows) == {"0.weight", "0.bias", "2.weight", "2.bias"}


def test_print_of_a_recording_wraps_at_spaces_to_the_terminal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rec = _data_write_recording()
    (finding,) = rec.findings
    for columns in (80, 120):
        monkeypatch.setenv("COLUMNS", str(columns))
        text = str(rec)
        for line in text.splitlines():  # only a path longer than a line may stick out
            assert len(line) <= columns or any(len(w) > columns // 2 for w in line.split())
        words = " ".join(text.split())
        assert finding.message in words and finding.hint in words  # nothing cut
        assert f"{finding.code} {finding.kind} — {finding.title}" in words
