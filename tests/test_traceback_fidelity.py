"""Issue 24 item 4: the user's traceback stays theirs.

An error raised under ``record()``, ``watch()``, ``explain()`` and ``gradprobe diagnose``
shows the frames (file, line, function) it shows without gradprobe, and torch's warnings
name the user's line (NOTE [interposed frames] in ``gradprobe._tracebacks``, NOTE [calls
made from the caller's line] in ``gradprobe._recorder.frames``).
"""

from __future__ import annotations

import contextlib
import re
import subprocess
import sys
import traceback
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch
from torch import nn

import gradprobe
from gradprobe._tracebacks import raised_in_torch, user_traceback
from gradprobe.diagnose import diagnose_script

Frames = list[tuple[str, int, str]]


# -- the errors: each function raises one; the same code runs with and without gradprobe -----


def inplace_version_error() -> None:
    x = torch.ones(3, requires_grad=True)
    y = x.sigmoid()
    y.add_(1)
    y.sum().backward()


def backward_twice() -> None:
    x = torch.ones(3, requires_grad=True)
    loss = (x.exp() * 2).sum()
    loss.backward()
    loss.backward()


def nonscalar_backward() -> None:
    x = torch.ones(3, requires_grad=True)
    (x * 2).backward()


def leaf_inplace() -> None:
    x = torch.ones(3, requires_grad=True)
    x.add_(1)


class _TwoGrads(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, x: torch.Tensor) -> torch.Tensor:
        return x * 2

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> Any:
        return grad, grad  # one input, two gradients


def custom_function_gradient_count() -> None:
    x = torch.ones(3, requires_grad=True)
    _TwoGrads.apply(x).sum().backward()


def hook_wrong_shape() -> None:
    x = torch.ones(3, requires_grad=True)
    y = x * 2
    y.register_hook(lambda grad: torch.ones(4))
    y.sum().backward()


def requires_grad_on_int() -> None:
    torch.tensor([1, 2]).requires_grad_()


def optimizer_non_leaf() -> None:
    x = torch.ones(3, requires_grad=True)
    torch.optim.SGD([x * 2], lr=0.1)


def grad_of_unused_input() -> None:
    x = torch.ones(3, requires_grad=True)
    z = torch.ones(3, requires_grad=True)
    torch.autograd.grad((x * 2).sum(), [x, z])


class _Checked(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(3, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.shape[0] > 1:
            msg = f"batches of one only, got {x.shape[0]}"
            raise ValueError(msg)
        return self.lin(x)


def user_value_error_in_forward() -> None:
    _Checked()(torch.ones(2, 3))


def non_leaf_flag() -> None:
    x = torch.ones(3, requires_grad=True)
    y = x * 2
    y.requires_grad = False


def backward_without_grad_fn() -> None:
    torch.ones(3).sum().backward()


def matmul_shapes() -> None:
    a = torch.ones(2, 3, requires_grad=True)
    (a @ a).sum().backward()


def functional_in_python() -> None:
    x = torch.ones(3, requires_grad=True)
    torch.nn.functional.relu(x, inplace=True)


ERRORS: dict[str, Callable[[], None]] = {
    fn.__name__: fn
    for fn in (
        inplace_version_error,
        backward_twice,
        nonscalar_backward,
        leaf_inplace,
        custom_function_gradient_count,
        hook_wrong_shape,
        requires_grad_on_int,
        optimizer_non_leaf,
        grad_of_unused_input,
        user_value_error_in_forward,
        non_leaf_flag,
        backward_without_grad_fn,
        matmul_shapes,
        functional_in_python,
    )
}


CASES = list(ERRORS)


def _frames(error: BaseException | None) -> Frames:
    assert error is not None
    return [(f.filename, f.lineno or 0, f.name) for f in traceback.extract_tb(error.__traceback__)]


def _raised(fn: Callable[[], None], context: contextlib.AbstractContextManager[Any]) -> Exception:
    try:
        with context:
            fn()
    except Exception as error:  # noqa: BLE001
        return error
    pytest.fail(f"{fn.__name__} raised nothing")


# -- record(), watch(), explain() ------------------------------------------------------------------


@pytest.mark.parametrize("name", CASES)
def test_record_keeps_the_plain_frames(name: str) -> None:
    plain = _raised(ERRORS[name], contextlib.nullcontext())
    recorded = _raised(ERRORS[name], gradprobe.record())
    assert type(recorded) is type(plain) and recorded.args == plain.args
    assert _frames(recorded) == _frames(plain)


@pytest.mark.parametrize("name", CASES)
def test_record_keeps_the_plain_frames_with_dynamo_loaded(name: str) -> None:
    """Once dynamo is imported, the mode is wrapped in ``torch._dynamo.disable``: its
    ``eval_frame.py`` frame goes too."""
    pytest.importorskip("torch._dynamo")
    with gradprobe.record():
        pass  # wraps the mode now that dynamo is imported
    plain = _raised(ERRORS[name], contextlib.nullcontext())
    recorded = _raised(ERRORS[name], gradprobe.record())
    assert _frames(recorded) == _frames(plain)


def _raised_under_both(fn: Callable[[], None]) -> Exception:
    try:
        with gradprobe.record(), gradprobe.explain():
            fn()
    except Exception as error:  # noqa: BLE001
        return error
    pytest.fail(f"{fn.__name__} raised nothing")


@pytest.mark.parametrize("name", CASES)
def test_record_and_explain_in_one_with_keep_the_plain_frames(name: str) -> None:
    """The frames explain()'s ``__exit__`` adds go when record() hands the error on."""
    plain = _raised(ERRORS[name], contextlib.nullcontext())
    both = _raised_under_both(ERRORS[name])
    plain_frames, both_frames = _frames(plain), _frames(both)
    assert both_frames[1:] == plain_frames[1:]  # the head is each helper's own line
    assert both_frames[0][2] == "_raised_under_both"


@pytest.mark.parametrize("name", list(ERRORS))
def test_explain_keeps_the_plain_frames(name: str) -> None:
    """An error explain() leaves alone is the same object with the same frames. One it
    explains has torch's error as its cause, with the same frames; its own traceback adds
    only what Python adds to any exception raised by ``__exit__`` (the ``with`` line and
    ``Explain.__exit__``), in front of those frames."""
    plain = _raised(ERRORS[name], contextlib.nullcontext())
    explained = _raised(ERRORS[name], gradprobe.explain())
    if not isinstance(explained, gradprobe.AutogradError):
        assert type(explained) is type(plain) and _frames(explained) == _frames(plain)
        return
    assert explained.__cause__ is not None
    assert _frames(explained.__cause__) == _frames(plain)
    head, exit_frame, *rest = _frames(explained)
    assert head[2] == "_raised" and exit_frame[2] == "__exit__"
    assert rest == _frames(plain)


@pytest.mark.parametrize("name", CASES)
def test_watch_keeps_the_plain_frames(name: str) -> None:
    model = nn.Linear(3, 3)
    model(torch.ones(1, 3)).sum().backward()
    plain = _raised(ERRORS[name], contextlib.nullcontext())
    watched = _raised(ERRORS[name], gradprobe.watch(model))
    assert _frames(watched) == _frames(plain)


def test_watch_keeps_the_plain_frames_of_a_watched_forward() -> None:
    """torch's Module._call_impl goes through ``inner`` when hooks are registered, and
    watch() registers its own: the fast path's single entry comes back."""
    model = _Checked()

    def call() -> None:
        model(torch.ones(2, 3))

    plain = _raised(call, contextlib.nullcontext())
    watched = _raised(call, gradprobe.watch(model))
    assert _frames(watched) == _frames(plain)
    recorded = _raised(call, gradprobe.record())
    assert _frames(recorded) == _frames(plain)


def test_chained_errors_keep_their_frames() -> None:
    def wrapped() -> None:
        try:
            inplace_version_error()
        except RuntimeError as error:
            msg = "the training step failed"
            raise KeyError(msg) from error

    plain = _raised(wrapped, contextlib.nullcontext())
    recorded = _raised(wrapped, gradprobe.record())
    assert _frames(recorded) == _frames(plain)
    assert recorded.__cause__ is not None and plain.__cause__ is not None
    assert _frames(recorded.__cause__) == _frames(plain.__cause__)


def test_gradprobes_own_errors_keep_their_frames() -> None:
    """An error gradprobe raises on purpose shows where it raised it."""
    with pytest.raises(gradprobe.GradprobeTypeError) as info, gradprobe.record():
        gradprobe.explain(print)  # type: ignore[arg-type]
    files = [file for file, _, _ in _frames(info.value)]
    assert any(file.endswith("_explain.py") for file in files)


# -- where an error came from ---------------------------------------------------------------


def test_raised_in_torch_reads_the_frames_not_the_words() -> None:
    torch_error = _raised(nonscalar_backward, contextlib.nullcontext())
    assert raised_in_torch(torch_error)
    leaf = _raised(leaf_inplace, contextlib.nullcontext())  # C code the user's line ran
    assert raised_in_torch(leaf)
    copied = RuntimeError(str(torch_error))
    assert not raised_in_torch(copied)  # never raised: nobody knows where from

    def says_the_same() -> None:
        raise RuntimeError(str(torch_error))

    assert not raised_in_torch(_raised(says_the_same, contextlib.nullcontext()))
    recorded = _raised(leaf_inplace, gradprobe.record())
    assert raised_in_torch(recorded)


def test_user_traceback_changes_nothing_else() -> None:
    error = _raised(backward_twice, contextlib.nullcontext())
    frames, args = _frames(error), error.args
    assert user_traceback(error) is error
    assert _frames(error) == frames and error.args == args


# -- diagnose ---------------------------------------------------------------------------------

_SCRIPT = f"""\
import sys
sys.path.insert(0, {str(Path(__file__).parent)!r})
import test_traceback_fidelity as errors

errors.ERRORS[sys.argv[1]]()
"""

_FILE_LINE = re.compile(r'^  File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<name>.+)$')


def _printed_frames(text: str) -> Frames:
    found = []
    for line in text.splitlines():
        match = _FILE_LINE.match(line)
        if match:
            found.append((match["file"], int(match["line"]), match["name"]))
    return found


def test_diagnose_prints_the_plain_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``gradprobe diagnose script.py`` prints the traceback ``python script.py`` prints."""
    script = tmp_path / "fails.py"
    script.write_text(_SCRIPT)
    compared = 0
    for name in ERRORS:
        plain = subprocess.run(
            [sys.executable, str(script), name], capture_output=True, text=True, check=False
        )
        assert plain.returncode == 1, plain.stderr
        capsys.readouterr()
        result = diagnose_script(script, [name])
        printed = capsys.readouterr().err
        assert result.exit_code == 1
        expected = _printed_frames(plain.stderr)
        assert expected and _printed_frames(printed) == expected, name
        last = plain.stderr.strip().splitlines()[-1]
        assert printed.strip().splitlines()[-1] == last
        compared += len(expected)
    assert compared >= 3 * len(ERRORS)


# -- warnings ---------------------------------------------------------------------------------


def _warns_non_leaf_grad() -> None:
    x = torch.ones(3, requires_grad=True)
    y = x * 2
    y.grad  # noqa: B018


def _warns_copy_construct() -> None:
    torch.tensor(torch.ones(3))


def _warns_target_size() -> None:
    torch.nn.functional.mse_loss(torch.ones(3, 1, requires_grad=True), torch.ones(3))


def _warns_scheduler_order() -> None:
    p = nn.Parameter(torch.ones(1))
    optimizer = torch.optim.SGD([p], lr=0.1)
    torch.optim.lr_scheduler.StepLR(optimizer, 1).step()


def _warns_softmax_dim() -> None:
    torch.nn.functional.softmax(torch.ones(2, 3, requires_grad=True))


WARNINGS = [
    _warns_non_leaf_grad,
    _warns_copy_construct,
    _warns_target_size,
    _warns_scheduler_order,
    _warns_softmax_dim,
]


def _caught(fn: Callable[[], None], context: contextlib.AbstractContextManager[Any]) -> list[Any]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with context:
            fn()
    return [(w.filename, w.lineno, w.category, str(w.message)) for w in caught]


@pytest.mark.parametrize("fn", WARNINGS, ids=lambda fn: fn.__name__)
def test_torch_warnings_name_the_users_line(fn: Callable[[], None]) -> None:
    plain = _caught(fn, contextlib.nullcontext())
    recorded = _caught(fn, gradprobe.record())
    assert plain and recorded == plain
    assert all(filename == __file__ for filename, *_ in recorded)


def test_the_non_leaf_grad_warning_names_its_line() -> None:
    x = torch.ones(3, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught, gradprobe.record():
        warnings.simplefilter("always")
        y = x * 2
        line = sys._getframe().f_lineno + 1
        y.grad  # noqa: B018
    assert [(w.filename, w.lineno) for w in caught] == [(__file__, line)]


def test_a_warning_shown_once_per_line_is_shown_once_per_user_line() -> None:
    """Python's "default" action shows a warning once per line of the user's module, as
    without gradprobe (the registry is the caller's module's, not the recorder's)."""

    def twice() -> None:
        torch.tensor(torch.ones(1))
        torch.tensor(torch.ones(1))

    def counted(context: contextlib.AbstractContextManager[Any]) -> int:
        with warnings.catch_warnings(record=True) as caught:
            warnings.resetwarnings()
            warnings.simplefilter("default")
            globals().pop("__warningregistry__", None)
            with context:
                twice()
                twice()
        return len(caught)

    assert counted(gradprobe.record()) == counted(contextlib.nullcontext()) == 2


def test_a_module_with_a_hook_of_the_users_keeps_torchs_hooked_path() -> None:
    """With a hook of the user's, plain torch goes through ``inner`` too: it stays."""
    model = _Checked()
    model.register_forward_pre_hook(lambda module, args: None)

    def call() -> None:
        model(torch.ones(2, 3))

    plain = _raised(call, contextlib.nullcontext())
    assert any(name == "inner" for _, _, name in _frames(plain))
    assert _frames(_raised(call, gradprobe.record())) == _frames(plain)
