"""``gradprobe diagnose`` follows a script into the processes it starts: multiprocessing
workers (spawn, forkserver) record, a worker that dies still counts, the user's own
``sitecustomize`` still runs, and one merged report comes out."""

from __future__ import annotations

import json
import os
import sys
import textwrap
from pathlib import Path

import pytest
from tests._ddp import causes, free_port, line_of, only, port_is_free, run

from gradprobe import _ranklog
from gradprobe._distributed.merge import merge
from gradprobe._distributed.worker import leave_findings
from gradprobe.findings import Location, make_finding

# A worker that backpropagates twice through one graph (GP103), started by plain
# multiprocessing; the parent itself does nothing wrong.
_WORKER = """\
import multiprocessing as mp
import sys

import torch


def work(n):
    w = torch.ones(3, requires_grad=True)
    loss = (w * w).sum()
    loss.backward()
    loss.backward()  # the graph is already freed


if __name__ == "__main__":
    ctx = mp.get_context(sys.argv[1])
    worker = ctx.Process(target=work, args=(1,))
    worker.start()
    worker.join()
    print("worker exit", worker.exitcode)
"""


@pytest.mark.parametrize("method", ["spawn", "forkserver"])
def test_multiprocessing_workers_record_and_user_sitecustomize_still_runs(
    method: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = tmp_path / "train.py"
    script.write_text(_WORKER)
    own = tmp_path / "site"  # the user's own sitecustomize, which gradprobe's must not hide
    own.mkdir()
    marks = tmp_path / "marks"
    marks.mkdir()
    (own / "sitecustomize.py").write_text(
        f"import os, pathlib\npathlib.Path({str(marks)!r}, str(os.getpid())).touch()\n"
    )
    report = tmp_path / "report.json"
    path = os.environ.get("PYTHONPATH")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(own), path])))
    done = run(
        [sys.executable, "-m", "gradprobe", "diagnose", "--json", str(report), str(script), method],
        tmp_path,
    )
    assert "worker exit 1" in done.stdout, done.stderr[-2000:]
    data = json.loads(report.read_text())
    finding = only(data, "GP103")
    assert line_of(script, "the graph is already freed") in [
        loc["line"] for loc in finding["locations"]
    ]
    assert "ranks" not in data  # no rank: plain multiprocessing workers
    assert len(list(marks.iterdir())) >= 2  # the diagnose process and the worker


# Rank 1 skips a layer, then dies by SIGKILL before DDP can complain: its notes, written
# as it ran, still explain rank 0's failure.
_KILLED = """\
import os
import signal
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.b = nn.Linear(4, 1)
        self.c = nn.Linear(4, 4)

    def forward(self, x, rank):
        h = self.a(x)
        if rank == 0:
            h = self.c(h)
        return self.b(h)


def main(rank):
    dist.init_process_group("gloo", rank=rank, world_size=2, timeout=timedelta(seconds=10))
    model = DDP(Net())
    out = model(torch.randn(2, 4), rank)
    if rank == 1:
        os.kill(os.getpid(), signal.SIGKILL)
    out.sum().backward()
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(main, nprocs=2)
"""


@pytest.mark.slow
def test_a_killed_rank_still_contributes_its_notes(tmp_path: Path) -> None:
    script = tmp_path / "killed.py"
    script.write_text(_KILLED)
    port = free_port()
    report = tmp_path / "report.json"
    done = run(
        [sys.executable, "-m", "gradprobe", "diagnose", "--json", str(report), str(script)],
        tmp_path,
        port,
    )
    assert report.exists(), done.stderr[-3000:]
    assert port_is_free(port)
    data = json.loads(report.read_text())
    assert data["exit_code"] != 0
    finding = only(data, "GP411")
    assert finding["details"]["unused_on"] == [1]
    assert finding["details"]["parameters"] == ["c.weight", "c.bias"]
    assert causes(finding) == [line_of(script, "if rank == 0:"), line_of(script, "self.c(h)")]


def test_findings_equal_on_several_ranks_are_merged_with_their_ranks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    here = Location(str(tmp_path / "train.py"), 3, "cause", "main", "loss.backward()")
    same = make_finding("GP103", locations=[here])
    other = make_finding("GP104", locations=[here])
    monkeypatch.setenv(_ranklog.ENV, str(tmp_path))
    for pid, rank, found in ((101, 0, [same]), (102, 1, [same, other])):
        monkeypatch.setattr(os, "getpid", lambda pid=pid: pid)
        _ranklog.note("rank", rank=rank, world=2)
        leave_findings(found, None)
    # a worker killed while writing leaves half a line: skipped, the rest kept
    with (tmp_path / "102.jsonl").open("a") as out:
        out.write('{"kind": "findings", "rank": 1, "findi')
    merged = merge(tmp_path)
    assert merged.ranks == (0, 1)
    assert [(f.code, f.details["ranks"]) for f in merged.findings] == [
        ("GP103", [0, 1]),
        ("GP104", [1]),
    ]


def test_notes_outside_diagnose_go_nowhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(_ranklog.ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    _ranklog.note("rank", rank=0, world=1)
    assert list(tmp_path.iterdir()) == []


def test_single_process_report_has_no_ranks(tmp_path: Path) -> None:
    script = tmp_path / "one.py"
    script.write_text(
        textwrap.dedent(
            """\
            import torch
            w = torch.ones(2, requires_grad=True)
            loss = (w * w).sum()
            loss.backward()
            loss.backward()
            """
        )
    )
    report = tmp_path / "report.json"
    run(
        [sys.executable, "-m", "gradprobe", "diagnose", "--json", str(report), str(script)],
        tmp_path,
    )
    data = json.loads(report.read_text())
    assert "ranks" not in data
    assert "ranks" not in only(data, "GP103")
    assert not list(
        Path(os.environ.get("TMPDIR", "/tmp")).glob(f"gradprobe-diagnose-*/{os.getpid()}.jsonl")
    )
