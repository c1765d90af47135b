"""An error a DataLoader worker process raised (re-raised in the loop that iterated, with the
worker's traceback as text) is blamed inside the worker: the user's code the worker ran, or
the dataset's ``__getitem__`` when torch's collation refused what it returned."""

from __future__ import annotations

import textwrap
from pathlib import Path

from gradprobe.checks._workers import worker_error
from gradprobe.diagnose import diagnose_script
from gradprobe.findings import Finding

_DATASET = """\
    import torch
    from torch.utils.data import DataLoader, Dataset


    class Rows(Dataset):
        def __init__(self):
            self.weights = torch.randn(8, 4, requires_grad=True)

        def __len__(self):
            return 8

        def __getitem__(self, index):
            row = self.weights[index]
            return {returned}


    if __name__ == "__main__":
        loader = DataLoader(Rows(), batch_size=4, num_workers=1)
        for batch in loader:
            print(batch.shape)
    """


def _diagnosed(tmp_path: Path, returned: str) -> list[Finding]:
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(_DATASET.format(returned=returned)))
    result = diagnose_script(script)
    assert result.error is not None, "the worker was meant to fail"
    return list(result.findings)


def _lines(finding: Finding, role: str) -> list[int]:
    return [loc.line for loc in finding.locations if loc.role == role]


def test_a_user_line_in_the_workers_traceback_is_the_cause(tmp_path: Path) -> None:
    [finding] = _diagnosed(tmp_path, "row.numpy()")  # numpy() of a tensor that requires grad
    assert _lines(finding, "cause") == [14]
    assert _lines(finding, "error") == [19]
    assert "Can't call numpy()" in finding.message
    assert "DataLoader worker" in finding.message


def test_a_sample_torch_could_not_collate_is_blamed_on_getitems_return(tmp_path: Path) -> None:
    [finding] = _diagnosed(tmp_path, "row * 2")  # requires grad: stack(out=...) refuses it
    assert _lines(finding, "cause") == [14]
    assert _lines(finding, "error") == [19]


def test_only_a_reraised_worker_error_is_read_as_one() -> None:
    text = (
        "Caught ValueError in DataLoader worker process 3.\nOriginal Traceback (most recent "
        'call last):\n  File "/data/train.py", line 12, in __getitem__\n    return x\n'
        "ValueError: bad sample\n"
    )
    worker = worker_error(text)
    assert worker is not None
    assert worker.inner_text == "bad sample"
    assert worker.frames == [("/data/train.py", 12, "__getitem__")]
    assert worker_error("ValueError: bad sample") is None
