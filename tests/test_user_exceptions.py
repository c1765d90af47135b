"""Issue 24 item 4: every exception of the user's comes out of ``record()``, ``explain()``
and ``watch()`` as it went in: the same object, type, args, message, notes and cause, also
when its message reads like torch's, its ``__init__`` needs arguments or its ``__str__``
raises; and no code of its class runs again.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Callable
from typing import Any

import pytest
import torch
from torch import nn

import gradprobe

# torch's own words, copied into the user's exceptions
TORCH_TEXTS = (
    (
        "Trying to backward through the graph a second time (or directly access saved tensors "
        "after they have already been freed). Saved intermediate values of the graph are freed "
        "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
        "backward through the graph a second time or if you need to access saved tensors after "
        "calling backward."
    ),
    (
        "one of the variables needed for gradient computation has been modified by an inplace "
        "operation: [torch.FloatTensor [3]], which is output 0 of SigmoidBackward0, is at "
        "version 1; expected version 0 instead."
    ),
    "grad can be implicitly created only for scalar outputs",
    "a leaf Variable that requires grad is being used in an in-place operation.",
    "element 0 of tensors does not require grad and does not have a grad_fn",
    "only Tensors of floating point dtype can require gradients",
    "can't optimize a non-leaf Tensor",
    "plain words of the user's",
)
BASES: tuple[type[Exception], ...] = (Exception, RuntimeError, TypeError, ValueError, KeyError)
SHAPES = ("builtin", "subclass", "required_init", "raising_str", "noted_and_chained")

MADE: list[str] = []  # every run of a user's __init__, to see that none runs twice


def _kind(base: type[Exception], shape: str) -> Callable[[str], Exception]:
    """A maker of one exception kind of the user's, given a message."""
    if shape == "builtin":
        return base
    name = f"User{base.__name__}{shape.title().replace('_', '')}"
    if shape == "required_init":

        def init(self: Any, step: int, text: str) -> None:
            MADE.append(name)
            base.__init__(self, f"step {step}: {text}")
            self.step = step

        cls = type(name, (base,), {"__init__": init})
        return lambda text: cls(7, text)
    if shape == "raising_str":

        def broken(self: Any) -> str:
            msg = "this exception cannot be printed"
            raise ValueError(msg)

        return type(name, (base,), {"__str__": broken})
    cls = type(name, (base,), {})
    if shape == "noted_and_chained":

        def make(text: str) -> Exception:
            error = cls(text)
            error.__notes__ = ["a note of the user's"]
            try:
                raise RuntimeError(TORCH_TEXTS[0])
            except RuntimeError as cause:
                error.__cause__ = cause
            return error

        return make
    return cls


KINDS = [
    (f"{base.__name__}-{shape}-{index}", _kind(base, shape), text)
    for (base, shape), (index, text) in itertools.product(
        itertools.product(BASES, SHAPES), enumerate(TORCH_TEXTS)
    )
]


def test_two_hundred_kinds() -> None:
    assert len(KINDS) == 200
    assert len({name for name, _, _ in KINDS}) == 200


class _Raises(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(2, 2)
        self.error: Exception | None = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.lin(x)
        if self.error is not None:
            raise self.error
        return y


def _str(error: BaseException) -> tuple[str, str]:
    try:
        return ("text", str(error))
    except Exception as problem:  # noqa: BLE001
        return ("raises", type(problem).__name__)


def _snapshot(error: BaseException) -> tuple[Any, ...]:
    return (
        type(error),
        error.args,
        _str(error),
        getattr(error, "__notes__", None),
        error.__cause__,
        vars(error).copy() if hasattr(error, "__dict__") else None,
    )


def _contexts(model: nn.Module) -> dict[str, Callable[[], contextlib.AbstractContextManager[Any]]]:
    return {
        "record": gradprobe.record,
        "explain": gradprobe.explain,
        "watch": lambda: gradprobe.watch(model),
        "record+explain": lambda: _both(gradprobe.record(), gradprobe.explain()),
    }


@contextlib.contextmanager
def _both(*contexts: contextlib.AbstractContextManager[Any]) -> Any:
    with contexts[0], contexts[1]:
        yield


@pytest.mark.parametrize("where", ["record", "explain", "watch", "record+explain"])
def test_every_user_exception_comes_out_unchanged(where: str) -> None:
    model = _Raises()
    make = _contexts(model)[where]
    changed = []
    for name, kind, text in KINDS:
        error = kind(text)
        before = _snapshot(error)
        made = len(MADE)
        model.error = error
        try:
            with make():
                loss = model(torch.ones(1, 2)).sum()  # raised inside the model's forward
                loss.backward()
        except BaseException as raised:  # noqa: BLE001
            same = raised is error and _snapshot(raised) == before and len(MADE) == made
            if not same:
                changed.append((name, type(raised).__name__))
        else:
            changed.append((name, "nothing raised"))
    assert changed == []


@pytest.mark.parametrize("where", ["record", "explain"])
def test_user_exceptions_raised_in_the_block_and_in_a_hook_come_out_unchanged(
    where: str,
) -> None:
    make = gradprobe.record if where == "record" else gradprobe.explain
    changed = []
    for name, kind, text in KINDS[::4]:  # one in four: every base, shape and text is here
        for place in ("block", "hook"):
            error = kind(text)
            before = _snapshot(error)
            try:
                with make():
                    x = torch.ones(2, requires_grad=True)
                    if place == "block":
                        raise error
                    y = x * 2

                    def hook(grad: torch.Tensor, error: Exception = error) -> None:
                        raise error

                    y.register_hook(hook)
                    y.sum().backward()
            except BaseException as raised:  # noqa: BLE001
                if raised is not error or _snapshot(raised) != before:
                    changed.append((name, place, type(raised).__name__))
    assert changed == []


def test_the_recording_keeps_a_copy_without_running_the_users_init() -> None:
    kinds = [kind for name, kind, _ in KINDS if "required_init" in name]
    for kind in kinds:
        error = kind(TORCH_TEXTS[1])
        made = len(MADE)
        recording = gradprobe.record()
        with pytest.raises(type(error)), recording:
            raise error
        assert len(MADE) == made
        copy = recording.error
        assert type(copy) is type(error) and copy.args == error.args
        assert copy.step == 7  # type: ignore[attr-defined]
        assert copy.__traceback__ is None


def test_an_unprintable_user_error_leaves_no_finding_of_gradprobes_own_failure() -> None:
    _, kind, text = next(k for k in KINDS if "RuntimeError-raising_str" in k[0])
    error = kind(text)
    with pytest.raises(type(error)), gradprobe.record() as recording:
        raise error
    assert "GP199" not in [finding.code for finding in recording.findings]
