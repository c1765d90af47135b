"""gradprobe: see, explain and test what PyTorch's autograd does.

Example:
    >>> import torch, gradprobe
    >>> x = torch.ones(2, requires_grad=True)
    >>> gradprobe.trace((x * x).sum())
    <Graph 3 nodes, 0 params, 2 saved tensors>
"""

from gradprobe import hooks as hooks  # public submodule; registers record()'s hook probe
from gradprobe.check import CheckReport, check
from gradprobe.errors import (
    AutogradError,
    BackwardWouldFail,
    GradprobeError,
    GradprobeTypeError,
    GradprobeValueError,
    GradprobeWarning,
    GraphvizNotFoundError,
    RenderError,
)
from gradprobe.explain import explain, explain_error
from gradprobe.findings import CODES, Code, Finding, Location, make_finding
from gradprobe.graph import Edge, Graph, Leaf, Node, Root, SavedTensor, Truncation
from gradprobe.leaves import LeafReport, LeafRow, leaf_report
from gradprobe.plot import MatplotlibNotFoundError
from gradprobe.record import Recording, RecordingError, record
from gradprobe.render import save_svg, to_dot, to_svg
from gradprobe.saliency import SaliencyBlindSpotError, SaliencyMap, grad_cam, guided_backprop
from gradprobe.testing import GradprobeAssertionError
from gradprobe.trace import trace
from gradprobe.watch import WatchSession, watch

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
    "make_finding",
    "record",
    "save_svg",
    "to_dot",
    "to_svg",
    "trace",
    "watch",
]
