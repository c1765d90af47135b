"""DDP findings on real two-rank gloo runs on localhost, started both ways users start
them: the script's own ``mp.spawn`` under ``gradprobe diagnose``, and torch's launcher
(``torchrun -m gradprobe diagnose``, ``gradprobe diagnose --nproc-per-node 2``).

Each finding must name its cause line; a healthy script must give none."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from tests._ddp import SCRIPTS, causes, line_of, only, shortcut, spawned, torchrun

pytestmark = pytest.mark.slow

UNUSED = SCRIPTS / "unused_on_one_rank.py"


@pytest.mark.parametrize("launch", [spawned, torchrun, shortcut])
def test_healthy_ddp_script_gives_no_finding(launch, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    report, _ = launch(SCRIPTS / "healthy.py", tmp_path)
    assert report["exit_code"] == 0
    assert report["ranks"] == [0, 1]
    assert report["findings"] == []


@pytest.mark.parametrize("launch", [spawned, torchrun])
def test_parameters_unused_on_one_rank_name_the_skipped_branch(launch, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    report, _ = launch(UNUSED, tmp_path)
    assert report["exit_code"] != 0  # DDP's own error on rank 1, as without gradprobe
    finding = only(report, "GP411")
    assert finding["details"]["parameters"] == ["refine.weight", "refine.bias"]
    assert finding["details"]["unused_on"] == [1]
    assert finding["details"]["used_on"] == [0]
    assert finding["ranks"] == [1]
    assert causes(finding) == [line_of(UNUSED, "if hard:"), line_of(UNUSED, "self.refine(h)")]
    assert "Expected to have finished reduction" in finding["message"]
    # rank 1's own GP107 says the same with less: merged away
    assert [f["code"] for f in report["findings"]] == ["GP411"]
    schema = json.loads((SCRIPTS.parent.parent / "docs" / "diagnose-schema.json").read_text())
    jsonschema.validate(report, schema)


def test_find_unused_parameters_true_does_not_hide_it(tmp_path: Path) -> None:
    report, _ = spawned(UNUSED, tmp_path, "--find-unused")
    assert report["exit_code"] == 0  # DDP itself says nothing
    finding = only(report, "GP411")
    assert finding["details"]["find_unused_parameters"] is True
    assert finding["details"]["unused_on"] == [1]
    assert causes(finding)[0] == line_of(UNUSED, "if hard:")
    assert "averaged with zeros" in finding["message"]


def test_find_unused_parameters_true_with_nothing_unused_costs(tmp_path: Path) -> None:
    script = tmp_path / "flag.py"
    script.write_text(
        (SCRIPTS / "healthy.py")
        .read_text()
        .replace("nn.Linear(8, 1)))", "nn.Linear(8, 1)), find_unused_parameters=True)")
    )
    report, _ = spawned(script, tmp_path)
    finding = only(report, "GP415")
    assert causes(finding) == [line_of(script, "find_unused_parameters=True")]
    assert [f["code"] for f in report["findings"]] == ["GP415"]


@pytest.mark.parametrize("launch", [spawned, shortcut])
def test_parameters_unfrozen_after_wrapping_diverge(launch, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    script = SCRIPTS / "unfrozen_after_wrap.py"
    report, _ = launch(script, tmp_path)
    assert report["exit_code"] == 0
    finding = only(report, "GP412")
    assert finding["details"]["parameters"] == ["0.weight", "0.bias"]
    assert finding["ranks"] == [0, 1]  # found on both ranks, shown once
    assert causes(finding) == [line_of(script, "backbone.requires_grad_(True)")]


def test_parameter_added_after_wrapping_diverges(tmp_path: Path) -> None:
    script = tmp_path / "added.py"
    script.write_text(
        (SCRIPTS / "healthy.py")
        .read_text()
        .replace(
            "    opt = torch.optim",
            "    model.module.scale = nn.Parameter(torch.ones(1))  # learned output scale\n"
            "    opt = torch.optim",
        )
        .replace(
            "loss = nn.functional.mse_loss(model(x), y)",
            "loss = nn.functional.mse_loss(model(x) * model.module.scale, y)",
        )
    )
    report, _ = spawned(script, tmp_path)
    finding = only(report, "GP412")
    assert finding["details"]["parameters"] == ["scale"]
    assert causes(finding) == [line_of(script, "nn.Parameter(torch.ones(1))")]


@pytest.mark.parametrize("launch", [spawned, torchrun])
def test_ranks_building_different_models_are_named(launch, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    script = SCRIPTS / "model_differs.py"
    report, _ = launch(script, tmp_path)
    assert report["exit_code"] != 0
    finding = only(report, "GP413")
    assert finding["details"]["differing"] == [
        "2.weight (8, 8) on rank 0, none on rank 1",
        "2.bias (8,) on rank 0, none on rank 1",
    ]
    assert causes(finding) == [line_of(script, "if deep:"), line_of(script, "nn.Linear(8, 8)")]
    errors = [loc["line"] for loc in finding["locations"] if loc["role"] == "error"]
    assert errors == [line_of(script, "model = DDP(")]


@pytest.mark.parametrize("launch", [spawned, shortcut])
def test_nan_born_on_one_rank_names_that_rank(launch, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    script = SCRIPTS / "nan_on_one_rank.py"
    report, _ = launch(script, tmp_path)
    finding = report["findings"][0]
    assert finding["code"] == "GP414"
    assert finding["details"]["born_on"] == [1]
    assert finding["details"]["received_on"] == [0]
    assert causes(finding) == [line_of(script, "torch.log(scale)")]


@pytest.mark.parametrize("launch", [spawned, torchrun])
def test_a_step_on_gradients_never_all_reduced_names_the_no_sync_block(
    launch, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    script = SCRIPTS / "step_inside_no_sync.py"
    report, _ = launch(script, tmp_path)
    assert report["exit_code"] == 0  # nothing fails: the replicas only drift apart
    finding = only(report, "GP416")
    assert finding["ranks"] == [0, 1]
    assert causes(finding) == [line_of(script, "with model.no_sync():")]
    reads = [loc["line"] for loc in finding["locations"] if loc["role"] == "read"]
    assert reads == [line_of(script, "opt.step()")]
    assert [f["code"] for f in report["findings"]] == ["GP416"]


def test_no_sync_on_all_but_the_last_micro_batch_is_silent(tmp_path: Path) -> None:
    script = tmp_path / "accumulate.py"
    script.write_text(
        (SCRIPTS / "step_inside_no_sync.py")
        .read_text()
        .replace(
            "        with model.no_sync():  # accumulate without all-reducing\n"
            "            for _ in range(2):\n"
            "                x, y = torch.randn(16, 4), torch.randn(16, 1)\n"
            "                nn.functional.mse_loss(model(x), y).backward()\n",
            "        with model.no_sync():  # the first micro-batch only accumulates\n"
            "            x, y = torch.randn(16, 4), torch.randn(16, 1)\n"
            "            nn.functional.mse_loss(model(x), y).backward()\n"
            "        x, y = torch.randn(16, 4), torch.randn(16, 1)\n"
            "        nn.functional.mse_loss(model(x), y).backward()  # all-reduces the sum\n",
        )
    )
    assert "all-reduces the sum" in script.read_text()
    report, _ = spawned(script, tmp_path)
    assert report["exit_code"] == 0
    assert report["findings"] == []
