"""Missing gradients: why a ``.grad`` is None or a parameter learns nothing.

Cuts in the graph (``.detach()``, ``.data``, ``no_grad``, ``.item()``), ``.grad`` read on a
non-leaf, constant loss terms, backward on a leaf or a non-scalar, requires_grad turned on
too late, and operations whose derivative is zero almost everywhere.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from gradprobe import _blame
from gradprobe._gradnone import none_grad_used
from gradprobe._lateleaf import late_leaves
from gradprobe.checks._api import BackwardCall, Check, Run, register
from gradprobe.findings import Finding

__all__ = [
    "FlatGradients",
    "GraphCut",
    "LateRequiresGrad",
    "LeafBackward",
    "NonLeafGradRead",
    "NoneGradUsed",
    "UnusedParameters",
]


@register
class NonLeafGradRead(Check):
    """``.grad`` read on a tensor that is not a leaf (GP106)."""

    name = "gradprobe.missing_gradients.non_leaf_grad"
    codes = ("GP106",)

    def conclude(self, run: Run) -> Iterable[Finding]:
        return _blame._grad_reads(run.events)


@register
class GraphCut(Check):
    """A loss, or a term of it, with no path back to what should learn: ``backward()`` on
    a tensor without ``grad_fn`` (GP104, GP105) and constant loss terms (GP113)."""

    name = "gradprobe.missing_gradients.graph_cut"
    codes = ("GP104", "GP105", "GP113")

    def on_backward_error(self, call: BackwardCall) -> Iterable[Finding]:
        text = "" if call.error is None else str(call.error)
        if _blame._NONSCALAR in text:
            return _blame._nonscalar(call.run.events, call.event, call.roots)
        if _blame._NO_GRAD_FN in text:
            return _blame._no_grad_fn(call.run.events, call.roots, call.run.taint)
        return ()

    def conclude(self, run: Run) -> Iterable[Finding]:
        return _blame._mixes(run.events)

    def on_error(self, run: Run, found: Sequence[Finding]) -> Iterable[Finding]:
        if not isinstance(run.error, Exception):
            return ()
        return _blame.scalar_backward(run.events, run.error)


@register
class UnusedParameters(Check):
    """Parameters of the modules that ran that got no gradient, and why (GP107)."""

    name = "gradprobe.missing_gradients.unused_parameters"
    codes = ("GP107",)
    reads_modules = True

    def conclude(self, run: Run) -> Iterable[Finding]:
        return _blame._unused(run.events, run.modules)


@register
class LeafBackward(Check):
    """``backward()`` called on a leaf: nothing behind it to reach (GP115)."""

    name = "gradprobe.missing_gradients.leaf_backward"
    codes = ("GP115",)

    def conclude(self, run: Run) -> Iterable[Finding]:
        return _blame._leaf_backwards(run.events)


@register
class FlatGradients(Check):
    """round/sign/floor between a parameter and the loss: zero gradients (GP120)."""

    name = "gradprobe.missing_gradients.flat_gradients"
    codes = ("GP120",)
    reads_modules = True

    def conclude(self, run: Run) -> Iterable[Finding]:
        return _blame._flat_gradients(run.events, list(run.modules))


@register
class LateRequiresGrad(Check):
    """``requires_grad`` turned on after the forward used the tensor (GP136)."""

    name = "gradprobe.missing_gradients.late_requires_grad"
    codes = ("GP136",)

    def conclude(self, run: Run) -> Iterable[Finding]:
        return late_leaves(run.events)


@register
class NoneGradUsed(Check):
    """The script failed on a ``.grad`` that was None (GP137)."""

    name = "gradprobe.missing_gradients.none_grad_used"
    codes = ("GP137",)

    def on_error(self, run: Run, found: Sequence[Finding]) -> Iterable[Finding]:
        if not isinstance(run.error, Exception):
            return ()
        return none_grad_used(run.events, run.error, found)
