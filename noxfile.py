"""Developer tasks: ``nox -s tests lint typecheck doctests docs site``; ``bench`` and
``tests_torch214`` on demand."""

from __future__ import annotations

import nox

nox.needs_version = ">=2024.3.2"
nox.options.sessions = ["tests", "lint", "typecheck", "doctests", "docs", "site"]
nox.options.default_venv_backend = "venv"

TORCH = "torch==2.13.0"  # the CPU build; install torch before gradprobe so pip never swaps it
# the pinned checkers (ruff, mypy, import-linter): pyproject's `lint` extra, shared with .ci/run
LINT = nox.project.load_toml("pyproject.toml")["project"]["optional-dependencies"]["lint"]
CHECKED = ("src", "tests", "benchmarks", "docs", "noxfile.py")


def _install(session: nox.Session, extras: str = "test", torch: str = TORCH) -> None:
    session.install(torch)
    session.install("-e", f".[{extras}]")


@nox.session
def tests(session: nox.Session) -> None:
    """The test suite on torch 2.13."""
    _install(session)
    session.run("pytest", *session.posargs)


@nox.session(name="tests_torch214", default=False)
def tests_torch214(session: nox.Session) -> None:
    """The test suite on torch 2.14.1 (node_creation_hook exists there)."""
    _install(session, torch="torch==2.14.1")
    session.run("pytest", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff (lint and formatting) and the import layers (lint-imports, pyproject's contract)."""
    _install(session, extras="lint")
    session.run("ruff", "check", *CHECKED)
    session.run("ruff", "format", "--check", *CHECKED)
    session.run("lint-imports")


@nox.session
def typecheck(session: nox.Session) -> None:
    """mypy --strict on the package."""
    _install(session, extras="test,lint")
    session.run("mypy")


@nox.session
def doctests(session: nox.Session) -> None:
    """The examples in the package's docstrings, run for real."""
    _install(session)
    # --pyargs: the installed package (pytest imports it first for pyproject's filterwarnings)
    session.run("pytest", "--doctest-modules", "--pyargs", "gradprobe", *session.posargs)


@nox.session
def docs(session: nox.Session) -> None:
    """Regenerate the real outputs shown in docs/ (text reports, SVGs, PNGs)."""
    _install(session, extras="test,plot")
    session.run("python", "docs/generate.py")


@nox.session
def site(session: nox.Session) -> None:
    """The docs site (mkdocs.yml), built with warnings as errors into site/."""
    _install(session, extras="docs")
    session.run("mkdocs", "build", "--strict", *session.posargs, env={"NO_MKDOCS_2_WARNING": "1"})


@nox.session(default=False)
def bench(session: nox.Session) -> None:
    """Benchmarks: ratios against baselines measured in the same run."""
    _install(session, extras="test,bench")
    session.run("python", "benchmarks/bench_trace.py", *session.posargs)
    session.run("python", "benchmarks/bench_render.py", *session.posargs)
