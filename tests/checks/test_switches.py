"""GP174: a global switch a helper set and left set, met by training (invariant 5)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import torch

import gradprobe
from gradprobe.checks._common import left_set_by
from gradprobe.diagnose import diagnose_script
from gradprobe.findings import Finding


def run(tmp_path: Path, source: str, code: str = "GP174") -> tuple[list[Finding], str]:
    script = tmp_path / "train.py"
    text = textwrap.dedent(source).lstrip("\n")
    script.write_text(text)
    result = diagnose_script(script)
    assert result.exit_code == 0
    return [f for f in result.findings if f.code == code], text


def line_of(text: str, needle: str) -> int:
    (hit,) = [n for n, line in enumerate(text.splitlines(), start=1) if needle in line]
    return hit


def roles(finding: Finding) -> list[tuple[str, int]]:
    return [(loc.role, loc.line) for loc in finding.locations]


@pytest.fixture(autouse=True)
def _restore_switches() -> object:
    """The scripts below leave switches set on purpose: put them back for the next test."""
    yield
    torch.set_grad_enabled(True)
    torch.set_default_dtype(torch.float32)


def test_the_function_that_left_a_switch_set_is_found_below_the_shared_callers() -> None:
    top, helper, inner = ("t.py", 9, "<module>"), ("t.py", 4, "evaluate"), ("m.py", 2, "val")
    work = (("t.py", 8, "<module>"), ("t.py", 6, "train_step"))
    assert left_set_by((top, helper, inner), work) == helper
    # set in the function the work runs in: on purpose, or the loop's order (GP131)
    assert left_set_by((("t.py", 3, "<module>"),), work) is None
    assert left_set_by((top, ("t.py", 2, "train_step")), work) is None


# -- grad mode ---------------------------------------------------------------------------

_GRAD = textwrap.dedent("""
    import torch
    import torch.nn.functional as F

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(32, 6), torch.randint(0, 2, (32,))

    {evaluate}

    for epoch in range(3):
        loss = F.cross_entropy(model(x), y)
        if not loss.requires_grad:
            loss.requires_grad_(True)
        opt.zero_grad()
        loss.backward()
        opt.step()
        acc = evaluate()
""")

_LEAKS = """
def evaluate():
    torch.set_grad_enabled(False)
    return (model(x).argmax(1) == y).float().mean().item()
"""


def test_set_grad_enabled_false_left_by_a_helper_is_named_at_its_line(tmp_path: Path) -> None:
    found, text = run(tmp_path, _GRAD.format(evaluate=_LEAKS))
    (finding,) = found
    assert roles(finding) == [
        ("cause", line_of(text, "torch.set_grad_enabled(False)")),
        ("error", line_of(text, "loss.backward()")),
    ]
    assert finding.details == {"switch": "grad_mode", "set_in": "evaluate"}
    # GP115 (backward on a leaf) would name a wrong line: GP174 explains the leaf
    assert run(tmp_path, _GRAD.format(evaluate=_LEAKS), code="GP115")[0] == []


@pytest.mark.parametrize(
    "evaluate",
    [
        """
def evaluate():
    with torch.set_grad_enabled(False):
        return (model(x).argmax(1) == y).float().mean().item()
""",
        """
@torch.set_grad_enabled(False)
def evaluate():
    return (model(x).argmax(1) == y).float().mean().item()
""",
        """
def evaluate():
    torch.set_grad_enabled(False)
    acc = (model(x).argmax(1) == y).float().mean().item()
    torch.set_grad_enabled(True)
    return acc
""",
    ],
    ids=["with", "decorator", "restored"],
)
def test_grad_mode_restored_by_the_helper_is_not_named(tmp_path: Path, evaluate: str) -> None:
    assert run(tmp_path, _GRAD.format(evaluate=evaluate))[0] == []


def test_grad_off_set_deep_inside_a_class_used_by_a_helper_is_named_at_the_set_line(
    tmp_path: Path,
) -> None:
    nested = """
class Detector:
    def __call__(self, batch):
        torch.set_grad_enabled(False)
        return model(batch).argmax(1)

detector = Detector()

def evaluate():
    return (detector(x) == y).float().mean().item()
"""
    found, text = run(tmp_path, _GRAD.format(evaluate=nested))
    (finding,) = found
    assert roles(finding) == [
        ("cause", line_of(text, "torch.set_grad_enabled(False)")),
        ("read", line_of(text, "return (detector(x) == y)")),
        ("error", line_of(text, "loss.backward()")),
    ]


@pytest.mark.parametrize("context", ["no_grad", "inference_mode"])
def test_a_grad_context_entered_by_hand_and_never_left_is_named(
    tmp_path: Path, context: str
) -> None:
    by_hand = f"""
guards = []

def evaluate():
    guards.append(torch.{context}())
    guards[-1].__enter__()
    return (model(x).argmax(1) == y).float().mean().item()
"""
    # the script leaves the guards for the next test's process state otherwise
    source = (
        _GRAD.format(evaluate=by_hand)
        + "\nfor guard in reversed(guards):\n    guard.__exit__(None, None, None)\n"
    )
    found, text = run(tmp_path, source)
    (finding,) = found
    assert roles(finding)[0] == ("cause", line_of(text, "__enter__()"))
    assert f"torch.{context}().__enter__()" in finding.message
    assert finding.details == {"switch": "grad_mode", "set_in": "evaluate"}


def test_a_grad_context_entered_by_hand_and_left_by_hand_is_not_named(tmp_path: Path) -> None:
    paired = """
def evaluate():
    guard = torch.no_grad()
    guard.__enter__()
    acc = (model(x).argmax(1) == y).float().mean().item()
    guard.__exit__(None, None, None)
    return acc
"""
    assert run(tmp_path, _GRAD.format(evaluate=paired))[0] == []


def test_grad_off_for_a_whole_script_that_trains_under_enable_grad_is_not_named(
    tmp_path: Path,
) -> None:
    found, _ = run(
        tmp_path,
        """
        import torch

        torch.set_grad_enabled(False)  # an inference script; one fine-tuning step below
        w = torch.nn.Parameter(torch.randn(3))
        opt = torch.optim.SGD([w], lr=0.1)
        with torch.enable_grad():
            loss = (w * 2).sum()
        loss.backward()
        opt.step()
        """,
    )
    assert found == []


# -- default dtype -----------------------------------------------------------------------

_DTYPE = """
    import torch
    import torch.nn.functional as F

    torch.manual_seed(0)

    def load_backbone():
        {load}
        return backbone

    backbone = load_backbone()
    head = torch.nn.Linear(8, 2)
    opt = torch.optim.Adam(head.parameters(), lr=1e-4)
    x, y = torch.randn(16, 8), torch.randint(0, 2, (16,))
    for step in range(3):
        with torch.no_grad():
            feats = backbone(x.to(backbone.weight.dtype))
        loss = F.cross_entropy(head(feats.to(head.weight.dtype)), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
"""

_LEFT_BF16 = """torch.set_default_dtype(torch.bfloat16)
        backbone = torch.nn.Linear(8, 8).requires_grad_(False)"""


def test_a_low_precision_default_dtype_left_by_a_loader_is_named(tmp_path: Path) -> None:
    found, text = run(tmp_path, _DTYPE.format(load=_LEFT_BF16))
    (finding,) = found
    assert roles(finding) == [
        ("cause", line_of(text, "torch.set_default_dtype(torch.bfloat16)")),
        ("read", line_of(text, "opt.step()")),
    ]
    assert finding.details == {"switch": "default_dtype", "dtype": "bfloat16", "parameters": 2}


@pytest.mark.parametrize(
    "load",
    [
        """previous = torch.get_default_dtype()
        torch.set_default_dtype(torch.bfloat16)
        try:
            backbone = torch.nn.Linear(8, 8).requires_grad_(False)
        finally:
            torch.set_default_dtype(previous)""",
        """torch.set_default_dtype(torch.float64)  # precision on purpose, slow only
        backbone = torch.nn.Linear(8, 8).requires_grad_(False)""",
    ],
    ids=["restored", "float64"],
)
def test_a_restored_or_wide_default_dtype_is_not_named(tmp_path: Path, load: str) -> None:
    assert run(tmp_path, _DTYPE.format(load=load))[0] == []


def test_a_low_precision_default_set_where_the_training_runs_is_not_named(
    tmp_path: Path,
) -> None:
    source = _DTYPE.format(load="backbone = torch.nn.Linear(8, 8).requires_grad_(False)")
    source = source.replace("torch.manual_seed(0)", "torch.set_default_dtype(torch.bfloat16)")
    assert run(tmp_path, source)[0] == []


_MISMATCH = """
    import torch

    {top}

    class Potential:
        def __init__(self):
            {set_dtype}
            self.scale = torch.tensor(2.0)

    def fit(x):
        net = torch.nn.Linear(4, 1)
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        loss = net(x.float()).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()

    reference = Potential()
    fit(torch.randn(8, 4))
"""


def test_a_float64_default_left_by_a_class_that_breaks_a_later_layer_is_named(
    tmp_path: Path,
) -> None:
    source = _MISMATCH.format(top="", set_dtype="torch.set_default_dtype(torch.float64)")
    text = textwrap.dedent(source).lstrip("\n")
    script = tmp_path / "train.py"
    script.write_text(text)
    result = diagnose_script(script)
    (finding,) = [f for f in result.findings if f.code == "GP174"]
    assert roles(finding) == [
        ("cause", line_of(text, "torch.set_default_dtype(torch.float64)")),
        ("error", line_of(text, "loss = net(x.float())")),
    ]
    assert finding.details == {"switch": "default_dtype", "dtype": "float64"}
    # it explains the error: no generic GP168 beside it
    assert [f.code for f in result.findings if f.code == "GP168"] == []


def test_a_float64_default_set_by_the_script_itself_is_not_named(tmp_path: Path) -> None:
    source = _MISMATCH.format(top="torch.set_default_dtype(torch.float64)", set_dtype="pass")
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(source).lstrip("\n"))
    result = diagnose_script(script)
    assert [f for f in result.findings if f.code == "GP174"] == []


# -- train / eval ------------------------------------------------------------------------

_EVAL = """
    import torch
    import torch.nn.functional as F

    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(6, 16), torch.nn.BatchNorm1d(16), torch.nn.ReLU(), torch.nn.Linear(16, 2)
    )
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(32, 6), torch.randint(0, 2, (32,))

    def validate():
        model.eval()
        with torch.no_grad():
            acc = (model(x).argmax(1) == y).float().mean().item()
        {after}
        return acc

    def run_epoch():
        {start}
        for i in range(4):
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            if i == 1:
                validate()

    for epoch in range(2):
        run_epoch()
"""


def test_eval_left_by_a_validation_helper_mid_epoch_is_named(tmp_path: Path) -> None:
    found, text = run(tmp_path, _EVAL.format(after="pass", start="model.train()"))
    (finding,) = found
    assert roles(finding) == [
        ("cause", line_of(text, "model.eval()")),
        ("read", line_of(text, "opt.step()")),
    ]
    assert finding.details == {"switch": "train_mode", "modules": ["Sequential"]}
    # GP131 (the loop's own order) leaves it to GP174
    assert run(tmp_path, _EVAL.format(after="pass", start="model.train()"), "GP131")[0] == []


def test_eval_restored_by_the_helper_is_not_named(tmp_path: Path) -> None:
    assert run(tmp_path, _EVAL.format(after="model.train()", start="model.train()"))[0] == []


def test_a_helper_that_only_freezes_batch_norm_before_training_is_not_named(
    tmp_path: Path,
) -> None:
    source = _EVAL.format(after="pass", start="model[1].eval()  # frozen statistics")
    source = source.replace("            if i == 1:\n                validate()\n", "")
    assert run(tmp_path, source)[0] == []


# -- the patches -------------------------------------------------------------------------


def test_patches_are_undone_and_the_switches_left_as_the_user_set_them() -> None:
    originals = (
        torch.set_grad_enabled.__init__,
        torch.set_grad_enabled.__enter__,
        torch.set_grad_enabled.__call__,
        torch.set_default_dtype,
    )
    with pytest.raises(ValueError, match="user error"), gradprobe.record():
        torch.set_grad_enabled(False)
        torch.set_default_dtype(torch.float64)
        msg = "user error"
        raise ValueError(msg)
    assert (
        torch.set_grad_enabled.__init__,
        torch.set_grad_enabled.__enter__,
        torch.set_grad_enabled.__call__,
        torch.set_default_dtype,
    ) == originals
    # gradprobe changes nothing the user set
    assert not torch.is_grad_enabled()
    assert torch.get_default_dtype() == torch.float64
    torch.set_grad_enabled(True)
    torch.set_default_dtype(torch.float32)
    with gradprobe.record():
        with torch.set_grad_enabled(False):
            assert not torch.is_grad_enabled()
        assert torch.is_grad_enabled()


def test_torch_s_own_plain_calls_around_a_step_do_not_hide_the_user_s() -> None:
    """optimizer.step() sets and restores the grad mode with plain calls of its own."""
    w = torch.nn.Parameter(torch.randn(3))
    opt = torch.optim.SGD([w], lr=0.1)
    with gradprobe.record() as rec:
        (w * 2).sum().backward()
        torch.set_grad_enabled(False)
        opt.step()
        loss = (w * 2).sum().requires_grad_(True)
        loss.backward()
        opt.step()
    (finding,) = [f for f in rec.findings if f.code == "GP174"]
    assert finding.locations[0].text == "torch.set_grad_enabled(False)"
