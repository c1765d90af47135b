"""gradprobe: see, explain and test what PyTorch's autograd does.

Example:
    >>> import torch, gradprobe
    >>> x = torch.ones(2, requires_grad=True)
    >>> gradprobe.trace((x * x).sum())
    <Graph 3 nodes, 0 params, 2 saved tensors>
"""

# Importing a name loads its module on first use (PEP 562), so `import gradprobe` and the
# command line's --help do not pay for torch's optional machinery, or for torch at all
# until a name that needs it is used. The names, __all__ and the objects are the same as
# with eager imports; the TYPE_CHECKING block is what type checkers and readers see.
import importlib as _importlib
import typing as _typing

if _typing.TYPE_CHECKING:
    from gradprobe import hooks as hooks  # public submodule
    from gradprobe._check import CheckReport, check
    from gradprobe._explain import explain, explain_error
    from gradprobe._record import Recording, record
    from gradprobe._trace import trace
    from gradprobe._watch import RankedWatch, WatchSession, watch
    from gradprobe.errors import (
        AutogradError,
        BackwardWouldFail,
        GradprobeAssertionError,
        GradprobeError,
        GradprobeTypeError,
        GradprobeValueError,
        GradprobeWarning,
        GraphvizNotFoundError,
        MatplotlibNotFoundError,
        RecordingError,
        RenderError,
        SaliencyBlindSpotError,
    )
    from gradprobe.findings import CODES, Code, Finding, Location, make_finding
    from gradprobe.graph import Edge, Graph, Leaf, Node, Root, SavedTensor, Truncation
    from gradprobe.leaves import LeafReport, LeafRow, leaf_report
    from gradprobe.render import save_html, save_svg, to_dot, to_svg
    from gradprobe.saliency import SaliencyMap, grad_cam, guided_backprop

__version__ = "0.1.0"

__all__ = [
    "CODES",
    "AutogradError",
    "BackwardWouldFail",
    "CheckReport",
    "Code",
    "Edge",
    "Finding",
    "GradprobeAssertionError",
    "GradprobeError",
    "GradprobeTypeError",
    "GradprobeValueError",
    "GradprobeWarning",
    "Graph",
    "GraphvizNotFoundError",
    "Leaf",
    "LeafReport",
    "LeafRow",
    "Location",
    "MatplotlibNotFoundError",
    "Node",
    "RankedWatch",
    "Recording",
    "RecordingError",
    "RenderError",
    "Root",
    "SaliencyBlindSpotError",
    "SaliencyMap",
    "SavedTensor",
    "Truncation",
    "WatchSession",
    "__version__",
    "check",
    "explain",
    "explain_error",
    "grad_cam",
    "guided_backprop",
    "leaf_report",
    "load_ipython_extension",
    "make_finding",
    "record",
    "save_html",
    "save_svg",
    "to_dot",
    "to_svg",
    "trace",
    "unload_ipython_extension",
    "watch",
]

# public name -> the module that defines it
_SOURCES = {
    "AutogradError": "gradprobe.errors",
    "BackwardWouldFail": "gradprobe.errors",
    "GradprobeError": "gradprobe.errors",
    "GradprobeTypeError": "gradprobe.errors",
    "GradprobeValueError": "gradprobe.errors",
    "GradprobeWarning": "gradprobe.errors",
    "GraphvizNotFoundError": "gradprobe.errors",
    "RenderError": "gradprobe.errors",
    "CheckReport": "gradprobe._check",
    "check": "gradprobe._check",
    "explain": "gradprobe._explain",
    "explain_error": "gradprobe._explain",
    "CODES": "gradprobe.findings",
    "Code": "gradprobe.findings",
    "Finding": "gradprobe.findings",
    "Location": "gradprobe.findings",
    "make_finding": "gradprobe.findings",
    "Edge": "gradprobe.graph",
    "Graph": "gradprobe.graph",
    "Leaf": "gradprobe.graph",
    "Node": "gradprobe.graph",
    "Root": "gradprobe.graph",
    "SavedTensor": "gradprobe.graph",
    "Truncation": "gradprobe.graph",
    "LeafReport": "gradprobe.leaves",
    "LeafRow": "gradprobe.leaves",
    "leaf_report": "gradprobe.leaves",
    "MatplotlibNotFoundError": "gradprobe.errors",
    "Recording": "gradprobe._record",
    "RecordingError": "gradprobe.errors",
    "record": "gradprobe._record",
    "save_html": "gradprobe.render",
    "save_svg": "gradprobe.render",
    "to_dot": "gradprobe.render",
    "to_svg": "gradprobe.render",
    "SaliencyBlindSpotError": "gradprobe.errors",
    "SaliencyMap": "gradprobe.saliency",
    "grad_cam": "gradprobe.saliency",
    "guided_backprop": "gradprobe.saliency",
    "GradprobeAssertionError": "gradprobe.errors",
    "trace": "gradprobe._trace",
    "RankedWatch": "gradprobe._watch",
    "WatchSession": "gradprobe._watch",
    "watch": "gradprobe._watch",
}


def __getattr__(name: str) -> _typing.Any:
    source = _SOURCES.get(name)
    if source is None:
        if name == "hooks":
            return _importlib.import_module("gradprobe.hooks")
        msg = f"module 'gradprobe' has no attribute {name!r}"
        raise AttributeError(msg)
    value = getattr(_importlib.import_module(source), name)
    globals()[name] = value
    return value


def load_ipython_extension(ipython: _typing.Any) -> None:
    """``%load_ext gradprobe`` in a notebook or IPython: adds the ``%%gradprobe`` cell magic
    (run the cell inside :func:`record` and show its findings) and explains autograd errors
    of later cells above their traceback. See ``docs/notebooks.md``."""
    _importlib.import_module("gradprobe._ipython").load(ipython)


def unload_ipython_extension(ipython: _typing.Any) -> None:
    """``%unload_ext gradprobe``: removes what :func:`load_ipython_extension` added."""
    _importlib.import_module("gradprobe._ipython").unload(ipython)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__, "hooks"})
