"""docs/api.md: the API reference's directives, one per public name, made from ``__all__``
so a new public name appears in the reference without editing the page (mkdocstrings
renders each from its docstring when the site is built)."""

from __future__ import annotations

import importlib

import gradprobe

# where a top-level name is defined -> the heading it is listed under, in this order
SECTIONS = {
    "gradprobe._trace": "Tracing",
    "gradprobe.graph": "The graph as data",
    "gradprobe.render": "Drawing",
    "gradprobe.leaves": "Leaves and their gradients",
    "gradprobe._record": "Recording: which line broke autograd",
    "gradprobe._check": "Checking a graph before backward",
    "gradprobe._explain": "Explaining autograd errors",
    "gradprobe.findings": "Findings",
    "gradprobe._watch": "Watching a training run",
    "gradprobe.saliency": "Saliency",
    "gradprobe.errors": "Errors",
    "gradprobe": "Notebooks: the IPython extension",
}
# public submodules: their own __all__, under their own heading
SUBMODULES = ("gradprobe.hooks", "gradprobe.testing", "gradprobe.strategies", "gradprobe.checks")


def _top_level() -> dict[str, list[str]]:
    sources: dict[str, str] = gradprobe._SOURCES  # the lazy namespace's name -> module
    grouped: dict[str, list[str]] = {}
    for name in gradprobe.__all__:
        source = sources.get(name)
        if source is not None:
            grouped.setdefault(source, []).append(name)
        elif name != "__version__":  # defined in the package itself (the IPython extension)
            grouped.setdefault("gradprobe", []).append(name)
    order = list(SECTIONS) + sorted(set(grouped) - set(SECTIONS))
    return {module: grouped[module] for module in order if module in grouped}


def reference() -> str:
    parts = []
    for module, names in _top_level().items():
        parts.append(f"## {SECTIONS.get(module, f'From `{module}`')}\n")
        parts.extend(f"::: gradprobe.{name}\n" for name in names)
    for module in SUBMODULES:
        names = importlib.import_module(module).__all__
        parts.append(f"## `{module}`\n")
        parts.extend(f"::: {module}.{name}\n" for name in names)
    return "\n".join(parts)


def blocks() -> dict[str, str]:
    return {"api-reference": reference()}
