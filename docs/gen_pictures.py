"""Pictures of findings for docs/pictures.md: three bugs run under ``gradprobe diagnose``.

Each example is written to a file of its own name and run as a script; its findings'
pictures go to ``docs/images/picture-<name>-<code>.svg`` with the DOT next to them. The DOT
is deterministic and compared byte for byte; the SVG depends on the layout engine, so only
its presence is checked.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from gradprobe.diagnose import diagnose_script
from gradprobe.render.picture import finding_dot, save_finding_svg

EXAMPLES = {
    "inplace": """\
import torch

a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
b = a.sigmoid()  # sigmoid saves its output b
b[1] = 2  # writes over it
b.sum().backward()
""",
    "cut": """\
import torch

x = torch.randn(8, 3)
w = torch.randn(3, 2, requires_grad=True)
scores = (x @ w).softmax(1)
picked = scores.argmax(1)  # no gradient flows through argmax
bonus = (picked == 1).float().mean()
loss = scores.sum() + bonus
loss.backward()
""",
    "nan": """\
import torch
import torch.nn.functional as F

student = torch.nn.Linear(4, 5)
logits = student(torch.randn(3, 4))
logits[:, -1] = -float("inf")  # mask a padded slot
teacher = torch.zeros(3, 5)
teacher[:, -1] = -float("inf")
loss = -(F.softmax(teacher, -1) * F.log_softmax(logits, -1)).sum()  # 0 * -inf
loss.backward()
""",
}


def _findings() -> dict[str, list[object]]:
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, source in EXAMPLES.items():
            script = Path(tmp) / f"{name}.py"
            script.write_text(source)
            out[name] = list(diagnose_script(script).findings)
    return out


def _pictures() -> dict[str, object]:
    """Image stem -> finding."""
    return {
        f"picture-{name}-{finding.code}": finding  # type: ignore[attr-defined]
        for name, findings in _findings().items()
        for finding in findings
    }


def write_images(images: Path) -> list[Path]:
    written = []
    for stem, finding in _pictures().items():
        (images / f"{stem}.dot").write_text(finding_dot(finding))  # type: ignore[arg-type]
        written.append(images / f"{stem}.dot")
        written.append(save_finding_svg(finding, images / f"{stem}.svg"))  # type: ignore[arg-type]
    return written


def stale_images(images: Path) -> list[Path]:
    stale = []
    for stem, finding in _pictures().items():
        dot = images / f"{stem}.dot"
        if not dot.exists() or dot.read_text() != finding_dot(finding):  # type: ignore[arg-type]
            stale.append(dot)
        if not (images / f"{stem}.svg").exists():
            stale.append(images / f"{stem}.svg")
    return stale
