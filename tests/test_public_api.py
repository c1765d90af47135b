"""The public surface: one sorted __all__, everything in it importable and documented."""

from __future__ import annotations

import importlib
import pickle
import pkgutil
import types

import gradprobe
from gradprobe import errors


def test_all_is_complete_and_sorted() -> None:
    # dir(), not vars(): the package imports each name on first use (PEP 562)
    public = [
        name
        for name in dir(gradprobe)
        if not name.startswith("_") and not isinstance(getattr(gradprobe, name), types.ModuleType)
    ]
    assert sorted(gradprobe.__all__) == sorted([*public, "__version__"])

    # ruff's RUF022 (isort-style) order: CONSTANTS, then Classes, then the rest.
    def style(name: str) -> tuple[int, str]:
        return (0 if name.isupper() else 1 if name[0].isupper() else 2, name)

    assert gradprobe.__all__ == sorted(gradprobe.__all__, key=style)


def test_every_public_name_has_a_docstring() -> None:
    for name in gradprobe.__all__:
        value = getattr(gradprobe, name)
        if not (callable(value) or isinstance(value, type)):
            continue  # data: __version__, CODES
        assert getattr(gradprobe, name).__doc__, name


def test_errors_inherit_the_builtin_a_caller_would_catch() -> None:
    assert issubclass(gradprobe.GradprobeTypeError, TypeError)
    assert issubclass(gradprobe.GradprobeValueError, ValueError)
    assert issubclass(gradprobe.GraphvizNotFoundError, gradprobe.RenderError)
    assert issubclass(gradprobe.RenderError, RuntimeError)
    for name in gradprobe.__all__:
        value = getattr(gradprobe, name)
        if (
            isinstance(value, type)
            and issubclass(value, Exception)
            and not issubclass(value, Warning)
        ):
            assert issubclass(value, gradprobe.GradprobeError), name


def _public_modules() -> list[types.ModuleType]:
    # every module of the package (gradprobe.strategies needs hypothesis: the test extra)
    names = [
        info.name
        for info in pkgutil.walk_packages(gradprobe.__path__, "gradprobe.")
        if info.name != "gradprobe.__main__"  # runs the command line
    ]
    return [importlib.import_module(name) for name in ["gradprobe", *names]]


def test_every_exception_class_is_defined_in_errors_and_drawn_in_its_tree() -> None:
    found: dict[str, type[BaseException]] = {}
    for module in _public_modules():
        for name in getattr(module, "__all__", ()):
            value = getattr(module, name)
            if isinstance(value, type) and issubclass(value, BaseException):
                found[f"{module.__name__}.{name}"] = value
    assert len(found) > 20  # the errors module and the modules re-exporting from it
    outside = {where: cls.__module__ for where, cls in found.items()}
    assert {where for where, defined in outside.items() if defined != "gradprobe.errors"} == set()
    classes = {cls.__name__ for cls in found.values()}
    assert classes == {name for name in errors.__all__ if isinstance(getattr(errors, name), type)}
    tree = errors.__doc__ or ""
    for name in classes:
        assert f"{name}(" in tree, f"{name} is missing from the tree in gradprobe.errors"


def test_errors_that_carry_findings_and_missing_extras_have_one_base_each() -> None:
    for cls in (
        errors.AutogradError,
        errors.BackwardWouldFail,
        errors.GradprobeAssertionError,
        errors.SaliencyBlindSpotError,
    ):
        assert issubclass(cls, errors.FindingsError), cls
        error = cls("message", ())
        assert error.findings == () and error.finding is None
        copy = pickle.loads(pickle.dumps(error))
        assert type(copy) is cls and str(copy) == "message" and copy.findings == ()
    assert issubclass(errors.GradprobeAssertionError, AssertionError)
    for cls in (errors.MatplotlibNotFoundError, errors.MissingDependencyError):
        assert issubclass(cls, errors.MissingExtraError), cls
        assert issubclass(cls, ImportError), cls


def test_functions_are_not_shadowed_by_their_modules() -> None:
    """The implementation modules are private (gradprobe._record, ...): importing them,
    before or after the function is used, never replaces gradprobe.record and the rest."""
    import importlib
    import inspect

    import gradprobe

    for name in ("trace", "record", "check", "explain", "watch"):
        module = importlib.import_module(f"gradprobe._{name}")
        function = getattr(gradprobe, name)
        assert inspect.isfunction(function), name
        assert function is getattr(module, name), name
        assert function.__module__.startswith(f"gradprobe._{name}"), name
    assert (
        importlib.import_module("gradprobe._watch.session").WatchSession is gradprobe.WatchSession
    )
