"""GP308: a full backward (pre) hook returning the wrong number of gradients is named at its
return line, with the module, under ``gradprobe diagnose``."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from gradprobe.diagnose import diagnose_script
from gradprobe.findings import Finding

_SCRIPT = """
    import torch
    from torch import nn

    layer = nn.{layer}

    def {name}(module, {args}):
        return {returned}

    layer.{register}({name})
    x = torch.randn({shape}, requires_grad=True)
    layer(x).sum().backward()
"""


def run(tmp_path: Path, **fields: str) -> tuple[list[Finding], str]:
    text = textwrap.dedent(_SCRIPT.format(**fields)).lstrip()
    script = tmp_path / "hooked.py"
    script.write_text(text)
    findings = [f for f in diagnose_script(script).findings if f.code == "GP308"]
    return findings, text


def line_of(text: str, needle: str) -> int:
    (hit,) = [n for n, line in enumerate(text.splitlines(), start=1) if needle in line]
    return hit


@pytest.mark.parametrize(
    ("layer", "shape", "legacy"),
    [
        ("Linear(6, 2)", "4, 6", "transposed weight"),
        ("Conv2d(3, 2, 3)", "1, 3, 8, 8", "input, weight and bias"),
    ],
)
def test_the_legacy_three_entry_layout_is_named(
    tmp_path: Path, layer: str, shape: str, legacy: str
) -> None:
    findings, text = run(
        tmp_path,
        layer=layer,
        shape=shape,
        name="scale_grads",
        args="grad_input, grad_output",
        returned="(None, grad_input[0] * 2, None)",
        register="register_full_backward_hook",
    )
    (finding,) = findings
    assert [(loc.role, loc.line) for loc in finding.locations] == [
        ("cause", line_of(text, "return (None")),
        ("error", line_of(text, ".backward()")),
    ]
    assert finding.module == layer.split("(")[0]
    assert finding.details == {"returned": 3, "expected": 1, "slot": "grad_input"}
    assert "'scale_grads'" in finding.message and legacy in finding.message


def test_a_pre_hook_returning_too_many_is_named(tmp_path: Path) -> None:
    findings, text = run(
        tmp_path,
        layer="Linear(6, 2)",
        shape="4, 6",
        name="clip_output",
        args="grad_output",
        returned="(grad_output[0].clamp(-1, 1), grad_output[0])",
        register="register_full_backward_pre_hook",
    )
    (finding,) = findings
    assert finding.locations[0].line == line_of(text, "return (grad_output")
    assert finding.details == {"returned": 2, "expected": 1, "slot": "grad_output"}
    assert "pre-hook 'clip_output'" in finding.message
    assert "legacy" not in finding.message


def test_a_hook_returning_the_right_length_is_not_named(tmp_path: Path) -> None:
    findings, _ = run(
        tmp_path,
        layer="Linear(6, 2)",
        shape="4, 6",
        name="scale_grads",
        args="grad_input, grad_output",
        returned="(grad_input[0] * 2,)",
        register="register_full_backward_hook",
    )
    assert findings == []
