"""gradprobe.explain: autograd errors re-raised with an explanation, same type family."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest
import torch

from gradprobe._explain import explain, explain_error
from gradprobe.errors import GradprobeError, GradprobeTypeError
from gradprobe.findings import AutogradError

HERE = str(Path(__file__).resolve())


def _stale_graph() -> tuple[torch.Tensor, torch.Tensor]:
    a = torch.ones(5, requires_grad=True)
    b = a + 2
    loss = (b * b).mean()
    b[0] = 1000.0
    return loss, b


def _raw_error(action: object) -> RuntimeError:
    with pytest.raises(RuntimeError) as info:
        action()  # type: ignore[operator]
    return info.value


def test_version_error_keeps_its_type_and_gains_an_explanation() -> None:
    loss, _ = _stale_graph()
    with pytest.raises(RuntimeError) as info, explain():
        loss.backward()
    error = info.value
    assert isinstance(error, GradprobeError)
    assert isinstance(error, AutogradError)
    assert type(error).__name__ == "ExplainedRuntimeError"
    original = error.__cause__
    assert type(original) is RuntimeError
    text = str(error)
    assert text.startswith("gradprobe GP101 inplace_modified_saved_tensor")
    assert text.endswith("\n\n" + str(original))
    assert "saved at version 0 and is at version 1" in text
    assert "CopySlices" in text and "t[i] = ..." in text
    assert error.finding is not None and error.finding.code == "GP101"
    (location,) = error.finding.locations
    assert (location.role, location.file) == ("error", HERE)
    assert location.text == "loss.backward()"


def test_with_tensors_the_explanation_names_node_slot_and_parameter() -> None:
    loss, b = _stale_graph()
    with pytest.raises(RuntimeError) as info, explain(loss, names={"b": b}):
        loss.backward()
    text = str(info.value)
    assert "MulBackward0 saved 'b' (slots 'other' and 'self')" in text
    assert info.value.__cause__ is not None

    layer = torch.nn.Linear(2, 3)
    optimizer = torch.optim.SGD(layer.parameters(), lr=0.1)
    x = torch.randn(4, 2, requires_grad=True)
    out = layer(x).sum()
    out.backward(retain_graph=True)
    optimizer.step()
    with pytest.raises(RuntimeError) as info, explain(out, model=layer):
        out.backward()
    finding = info.value.finding  # type: ignore[attr-defined]
    assert (finding.code, finding.parameter) == ("GP109", "weight")
    assert "Parameter 'weight'" in str(info.value)


def test_except_runtime_error_still_catches() -> None:
    loss, _ = _stale_graph()
    caught = None
    try:
        with explain():
            loss.backward()
    except RuntimeError as error:
        caught = error
    assert caught is not None


def _split_view() -> torch.Tensor:
    first, _ = (torch.ones(4, requires_grad=True) * 2).chunk(2)
    return first


def _no_grad_view() -> torch.Tensor:
    y = torch.ones(4, requires_grad=True) * 2
    with torch.no_grad():
        return y[:2]


def _hooked_inplace() -> None:
    layer = torch.nn.Linear(2, 2)
    layer.register_full_backward_hook(lambda module, grad_in, grad_out: None)
    layer(torch.ones(1, 2, requires_grad=True)).relu_()


def _set_flag(tensor: torch.Tensor, value: bool) -> None:
    tensor.requires_grad = value


@pytest.mark.parametrize(
    ("make", "code", "phrase"),
    [
        (lambda: torch.ones(3, requires_grad=True).add_(1), "GP102", "a leaf tensor"),
        (lambda: torch.ones(3, requires_grad=True)[0].zero_(), "GP102", "a view of a leaf"),
        (lambda: torch.ones(3).sum().backward(), "GP104", "does not require grad"),
        (lambda: (torch.ones(3, requires_grad=True) * 2).backward(), "GP105", "more than one"),
        (lambda: _split_view().mul_(2), "GP124", "several views returned by one call"),
        (lambda: _no_grad_view().mul_(2), "GP124", "made under torch.no_grad()"),
        (_hooked_inplace, "GP124", "full backward hook"),
        (lambda: torch.nn.Parameter(torch.tensor(10)), "GP125", "integer"),
        (lambda: torch.arange(3).requires_grad_(), "GP125", "integer"),
        (lambda: _set_flag((torch.ones(2, requires_grad=True) * 2), False), "GP126", "non-leaf"),
    ],
    ids=[
        "leaf",
        "leaf-view",
        "no-grad-fn",
        "non-scalar",
        "split-view",
        "no-grad-view",
        "hooked-output",
        "int-param",
        "int-flag",
        "non-leaf-flag",
    ],
)
def test_recognized_errors(make: object, code: str, phrase: str) -> None:
    original = _raw_error(make)
    with pytest.raises(RuntimeError) as info, explain():
        make()  # type: ignore[operator]
    error = info.value
    assert isinstance(error, GradprobeError)
    assert error.finding.code == code  # type: ignore[attr-defined]
    assert phrase in str(error).split("\n\n")[0]
    assert str(error).endswith(str(original))


def test_freed_graph() -> None:
    x = torch.ones(3, requires_grad=True)
    loss = (x * x).sum()
    loss.backward()
    expected = r"(?s)^gradprobe GP103.*\n\nTrying to backward"
    with pytest.raises(RuntimeError, match=expected), explain():
        loss.backward()


def test_unrelated_errors_pass_through_untouched() -> None:
    original = ValueError("x")
    with pytest.raises(ValueError) as info, explain():
        raise original
    assert info.value is original
    assert not isinstance(info.value, GradprobeError)
    other = RuntimeError("something else")
    with pytest.raises(RuntimeError) as info2, explain():
        raise other
    assert info2.value is other


def test_decorator_form() -> None:
    @explain()
    def step() -> None:
        (torch.ones(2, requires_grad=True) * 2).backward()

    with pytest.raises(AutogradError) as info:
        step()
    assert isinstance(info.value, RuntimeError)

    @explain()
    def fine() -> int:
        return 3

    assert fine() == 3


def test_bare_decorator_is_refused_with_a_hint() -> None:
    def step() -> None: ...

    with pytest.raises(GradprobeTypeError, match=r"@gradprobe\.explain\(\)"):
        explain(step)  # type: ignore[arg-type]
    with pytest.raises(GradprobeTypeError, match="only follow tensors"):
        explain("loss")  # type: ignore[arg-type]


def test_explained_error_classes_are_cached_and_pickle() -> None:
    errors = []
    for _ in range(2):
        loss, _ = _stale_graph()
        with pytest.raises(RuntimeError) as info, explain():
            loss.backward()
        errors.append(info.value)
    assert type(errors[0]) is type(errors[1])
    again = pickle.loads(pickle.dumps(errors[0]))
    assert type(again) is type(errors[0])
    assert str(again) == str(errors[0])
    assert again.findings == errors[0].findings  # type: ignore[attr-defined]


def test_explain_error_is_pure() -> None:
    loss, _ = _stale_graph()
    error = _raw_error(loss.backward)
    finding = explain_error(error)
    assert finding is not None and finding.code == "GP101"
    assert finding.details["version_saved"] == 0 and finding.details["version_now"] == 1
    assert finding.tensor == "torch.FloatTensor [5]"
    assert (
        explain_error(ValueError("grad can be implicitly created only for scalar outputs")) is None
    )
    assert explain_error(RuntimeError("nothing autograd")) is None


def test_already_explained_errors_are_not_wrapped_twice() -> None:
    loss, _ = _stale_graph()
    with pytest.raises(RuntimeError) as info, explain(), explain():
        loss.backward()
    assert str(info.value).count("gradprobe GP101") == 1
    assert type(info.value.__cause__) is RuntimeError


class StepError(RuntimeError):
    """A user's error type that takes other arguments than a message."""

    def __init__(self, step: int, text: str) -> None:
        super().__init__(f"step {step}: {text}")
        self.step = step


class TorchStepError(RuntimeError):
    """Stands for an error class of torch's own (``torch.OutOfMemoryError``)."""


TorchStepError.__module__ = "torch.fake_errors"


class Unprintable(RuntimeError):
    def __str__(self) -> str:
        msg = "this error cannot be printed"
        raise ValueError(msg)


def _nonscalar_backward_as(make: type[RuntimeError] | object) -> BaseException:
    x = torch.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError) as info, explain():
        try:
            (x * 2).backward()
        except RuntimeError as error:
            raise make(error) from None  # type: ignore[operator]
    return info.value


def test_a_user_error_type_saying_what_torch_says_comes_out_unchanged() -> None:
    """Issue 24 item 4: the user's exception, raised by their code with torch's words in
    it, is theirs: explain() leaves its type, args and message alone."""
    error = _nonscalar_backward_as(lambda e: StepError(3, str(e)))
    assert type(error) is StepError and not isinstance(error, AutogradError)
    assert error.step == 3  # type: ignore[attr-defined]
    assert error.args == ("step 3: grad can be implicitly created only for scalar outputs",)
    assert error.__cause__ is None


def test_errors_of_a_class_torch_defines_are_explained() -> None:
    """A type torch defines (here a stand-in in a ``torch.*`` module) is torch's own."""
    x = torch.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError) as info, explain():
        try:
            (x * 2).backward()
        except RuntimeError as error:
            raise TorchStepError(*error.args).with_traceback(error.__traceback__) from None
    assert type(info.value).__name__ == "ExplainedTorchStepError"
    assert str(info.value).startswith("gradprobe GP105 nonscalar_backward")
    assert type(info.value.__cause__) is TorchStepError


def test_an_error_whose_str_raises_comes_out_unchanged() -> None:
    error = _nonscalar_backward_as(lambda e: Unprintable(*e.args))
    assert type(error) is Unprintable  # not the ValueError its __str__ raises
    with pytest.raises(ValueError, match="cannot be printed"):
        str(error)
