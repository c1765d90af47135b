"""The public surface: one sorted __all__, everything in it importable and documented."""

from __future__ import annotations

import types

import gradprobe


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
