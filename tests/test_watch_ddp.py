"""watch() on a real two-rank gloo DDP run: its hooks leave DDP's gradients bit for bit as
they are without watching, and session.gather() merges the ranks on rank 0."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import torch
from tests._ddp import free_port, port_is_free, run, torch_teardown_abort

import gradprobe

pytestmark = pytest.mark.slow

SCRIPT = Path(__file__).resolve().parent.parent / "examples" / "ddp" / "watch_ranks.py"


def _train(tmp_path: Path, mode: str) -> None:
    port = free_port()
    done = run([sys.executable, str(SCRIPT), mode, str(tmp_path)], tmp_path, port)
    assert done.returncode == 0 or torch_teardown_abort(done.stderr), done.stderr[-3000:]
    assert port_is_free(port)


def test_watching_leaves_ddp_gradients_bit_identical_and_gathers_on_rank_0(tmp_path: Path) -> None:
    _train(tmp_path, "plain")
    _train(tmp_path, "watched")
    for rank in (0, 1):
        plain = torch.load(tmp_path / f"plain-{rank}.pt")
        watched = torch.load(tmp_path / f"watched-{rank}.pt")
        assert plain.keys() == watched.keys() and len(plain) == 4
        for name, (value, grad) in plain.items():
            assert torch.equal(value, watched[name][0]), name
            assert torch.equal(grad, watched[name][1]), name
    assert (tmp_path / "watched-1.gathered").read_text() == "None"  # only dst gets it
    data = json.loads((tmp_path / "watched.json").read_text())
    assert data["ranks"] == [0, 1]
    assert data["steps"] == {"0": 3, "1": 3}
    assert data["findings"] == [] and data["notes"] == []
    assert set(data["sessions"]) == {"0", "1"}
    # each rank's hooks saw its own local gradients: rank 1's inputs are 50 times larger,
    # so the first layer's weight gradient differs most between the ranks
    norms = data["gradient_norms"]
    assert {row["parameter"] for row in norms} == {
        f"module.{i}.{p}" for i in (0, 2) for p in ("weight", "bias")
    }
    first = norms[0]["norms"]
    assert first["0"] != first["1"]
    weight = next(row["norms"] for row in norms if row["parameter"] == "module.0.weight")
    assert weight["1"] > 5 * weight["0"]
    # the norms are the ones each rank's own session recorded
    sampled = [r for r in data["sessions"]["1"]["history"] if r["sampled"]]
    latest = sampled[-1]["gradients"]
    own = {g["name"]: g["stats"]["norm"] for g in latest if g["kind"] == "parameter"}
    assert own["module.0.weight"] == weight["1"]
    text = (tmp_path / "watched.txt").read_text()
    assert text.startswith("watch DistributedDataParallel on 2 ranks (0, 1): 3 steps; no findings")
    assert "module.0.weight" in text


def test_gather_merges_findings_and_names_uneven_step_counts(tmp_path: Path) -> None:
    _train(tmp_path, "uneven")
    data = json.loads((tmp_path / "uneven.json").read_text())
    assert data["steps"] == {"0": 3, "1": 2}
    codes = [(f["code"], f["parameter"], f["details"]["ranks"]) for f in data["findings"]]
    assert codes == [("GP107", "unused.weight", [0, 1]), ("GP107", "unused.bias", [0, 1])]
    assert "different numbers of steps (rank 0: 3, rank 1: 2)" in data["notes"][0]
    text = (tmp_path / "uneven.txt").read_text()
    assert "2 or 3 steps; 2 findings" in text.splitlines()[0]
    assert "ranks      0, 1" in text


def test_gather_without_a_process_group_says_what_to_do() -> None:
    model = torch.nn.Linear(2, 1)
    with gradprobe.watch(model) as session:
        model(torch.ones(1, 2)).sum().backward()
    with pytest.raises(gradprobe.GradprobeError, match="init_process_group"):
        session.gather()
    with pytest.raises(gradprobe.GradprobeTypeError, match="got 'zero'"):
        session.gather(dst="zero")  # type: ignore[arg-type]
