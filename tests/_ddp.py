"""Running the DDP example scripts as users do, on two real gloo ranks on localhost."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import gradprobe

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = ROOT / "examples" / "ddp"
# the gradprobe this test session imported, whatever is installed
SRC = str(Path(gradprobe.__file__).resolve().parent.parent)
LIMIT = 120  # seconds; a run that takes longer has hung (each takes well under a minute)


def free_port() -> int:
    """A port nothing listens on now (the OS picks it)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def port_is_free(port: int) -> bool:
    """Whether no socket is bound to ``port`` any more (connections closed by the run may
    linger in TIME_WAIT, which SO_REUSEADDR lets a new listener ignore, as TCPStore does)."""
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def environment(port: int | None = None) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_PORT", "GRADPROBE_DIAGNOSE_DIR")
        and not key.startswith("TORCHELASTIC")
    }
    env.update(
        COLUMNS="100",
        OMP_NUM_THREADS="1",
        PYTHONPATH=os.pathsep.join([SRC, *filter(None, [os.environ.get("PYTHONPATH")])]),
        MASTER_ADDR="127.0.0.1",
    )
    if port is not None:
        env["MASTER_PORT"] = str(port)
    return env


class Hung(subprocess.TimeoutExpired):
    """A job that did not end in time; its message shows what its processes were doing."""

    def __str__(self) -> str:
        return f"{super().__str__()}\n{self.stderr}"


def run(command: list[str], cwd: Path, port: int | None = None) -> subprocess.CompletedProcess[str]:
    """``command`` with the test environment. A run that hangs is stopped with SIGABRT
    first: every process of the job then prints the Python stack of each of its threads
    (faulthandler), and the timeout's message carries that output."""
    env = environment(port)
    env["PYTHONFAULTHANDLER"] = "1"
    process = subprocess.Popen(
        command,
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # the job's processes form one group
    )
    try:
        out, err = process.communicate(timeout=LIMIT)
    except subprocess.TimeoutExpired as hung:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGABRT)
        try:
            out, err = process.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            out, err = process.communicate()
        raise Hung(command, LIMIT, out, err[-20_000:]) from hung
    return subprocess.CompletedProcess(command, process.returncode, out, err)


def spawned(script: Path, tmp_path: Path, *args: str) -> tuple[dict[str, Any], str]:
    """``gradprobe diagnose --json`` on a script that starts its ranks with mp.spawn; the
    JSON report and stderr. The rendezvous port is free again afterwards."""
    port = free_port()
    report = tmp_path / "report.json"
    done = run(
        [sys.executable, "-m", "gradprobe", "diagnose", "--json", str(report), str(script), *args],
        tmp_path,
        port,
    )
    assert report.exists(), done.stderr[-3000:]
    assert port_is_free(port), f"port {port} is still held after the run"
    return json.loads(report.read_text()), done.stderr


def torchrun(script: Path, tmp_path: Path, *args: str) -> tuple[dict[str, Any], str]:
    """``torchrun --standalone --nproc-per-node 2 -m gradprobe diagnose --json`` (torchrun
    picks a free port itself)."""
    report = tmp_path / "report.json"
    done = run(
        [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--standalone",
            "--nproc-per-node",
            "2",
            "-m",
            "gradprobe",
            "diagnose",
            "--json",
            str(report),
            str(script),
            *args,
        ],
        tmp_path,
    )
    assert report.exists(), done.stderr[-3000:]
    return json.loads(report.read_text()), done.stderr


def shortcut(script: Path, tmp_path: Path, *args: str) -> tuple[dict[str, Any], str]:
    """``gradprobe diagnose --nproc-per-node 2 --json``."""
    report = tmp_path / "report.json"
    command = [sys.executable, "-m", "gradprobe", "diagnose", "--nproc-per-node", "2"]
    done = run([*command, "--json", str(report), str(script), *args], tmp_path)
    assert report.exists(), done.stderr[-3000:]
    return json.loads(report.read_text()), done.stderr


def torch_teardown_abort(stderr: str) -> bool:
    """Whether a rank died at interpreter exit with gloo's threads still running: torch 2.13
    does that in about 1 of 8 plain two-rank runs here, without gradprobe, when the world
    group outlives destroy_process_group() (importing torch.distributed.nn after
    init_process_group, which the first optimizer does, keeps it in function defaults). It
    happens after the script's work is done; what the test reads was written before."""
    return "terminate called without an active exception" in stderr


def line_of(script: Path, text: str) -> int:
    """The number of the one line of ``script`` that contains ``text``."""
    found = [n for n, line in enumerate(script.read_text().splitlines(), 1) if text in line]
    assert len(found) == 1, (text, found)
    return found[0]


def causes(finding: dict[str, Any]) -> list[int]:
    return [loc["line"] for loc in finding["locations"] if loc["role"] == "cause"]


def only(report: dict[str, Any], code: str) -> dict[str, Any]:
    found = [f for f in report["findings"] if f["code"] == code]
    assert len(found) == 1, [(f["code"], f["message"]) for f in report["findings"]]
    return found[0]
