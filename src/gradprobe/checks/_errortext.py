"""What torch's autograd error means, read from its text: which mistake, and the line it
points at. :func:`explain_error` is the one reader; ``gradprobe.explain()`` re-raises
errors with its findings and the ``gradprobe.errors.error_text`` check uses it for errors
nothing else explained.

Only torch's own errors are read: the text is what torch's words mean, and a user's
exception that happens to say the same words (a copied message, a ``RuntimeError``
subclass of their own) is theirs, not torch's. Torch's error is known by where it came
from (:func:`gradprobe._tracebacks.raised_in_torch`) and its type (the builtin torch
raises, or a class of torch's own), never by its words alone.
"""

from __future__ import annotations

import linecache
import sys
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

import torch

from gradprobe._compat import (
    CUSTOM_FUNCTION_VIEW_TEXT,
    FREED_ERROR,
    INTEGER_GRAD_ERROR,
    LEAF_INPLACE_ERROR,
    MULTI_VIEW_TEXT,
    NO_GRAD_FN_ERROR,
    NO_GRAD_VIEW_TEXT,
    NON_LEAF_FLAG_ERROR,
    NONSCALAR_ERROR,
)
from gradprobe._source import shown_file
from gradprobe._tracebacks import raised_in_torch
from gradprobe.checks._blame import blame
from gradprobe.checks._catalogue import Entry, worded_entry
from gradprobe.checks._common import _locations
from gradprobe.checks._errortable import EXCEPTION_TYPES, explain_plain
from gradprobe.checks._versions import parse_version_error
from gradprobe.findings import AutogradError, Finding, Location, make_finding

__all__ = ["explain_error", "explain_text", "worded_finding"]


_VIEW_INPLACE = (
    (
        "BackwardHookFunction",
        (
            "it is the output of a module with a full backward hook (register_full_backward_"
            "hook wraps it in a BackwardHookFunction view), written by an in-place op after "
            "it such as nn.ReLU(inplace=True); use inplace=False after hooked modules"
        ),
    ),
    (
        MULTI_VIEW_TEXT,
        (
            "it is one of several views returned by one call (split, chunk, unbind), e.g. "
            "`i, f = gates.chunk(2, 1); i.sigmoid_()`; use the out-of-place op "
            "(`i = i.sigmoid()`) or clone() the piece first"
        ),
    ),
    (
        NO_GRAD_VIEW_TEXT,
        (
            "it was made under torch.no_grad() and is written with grad mode on; make it "
            "outside no_grad, or write it inside no_grad too"
        ),
    ),
    (
        CUSTOM_FUNCTION_VIEW_TEXT,
        (
            "it is a view returned by a custom autograd.Function's forward; return a copy "
            "(clone()) from the Function, or do not write to its output in place"
        ),
    ),
)

# Frames from these directories are PyTorch's or ours, not the line the user wrote.
_SKIP_DIRS = tuple(
    str(Path(module.__file__).resolve().parent)
    for module in (torch, sys.modules["gradprobe"], sys.modules["contextlib"])
    if module.__file__
)

_WRITERS = {
    "torch::autograd::CopySlices": (
        "it was written through an index or slice (t[i] = ..., t[:, 0] += ...), which turns "
        "its grad_fn into CopySlices"
    ),
    "AsStrided": (
        "it is a view (such as weight.t(), saved by linear layers) of a tensor that was "
        "updated in place, typically a parameter changed by optimizer.step()"
    ),
}


def explain_error(exc: BaseException) -> Finding | None:
    """The finding behind torch's autograd error, read from its text; None if the text is
    not recognized or the error is not torch's own (see the module docstring: an error
    never raised, without a traceback, is not known to be torch's).

    Recognized: in-place modification of a saved tensor (GP101), in-place on a leaf
    (GP102), backward through a freed graph (GP103), backward on a tensor without grad_fn
    (GP104), implicit backward of a non-scalar (GP105), and the messages of the error
    catalogue (GP149-GP164, :mod:`gradprobe.checks._errortable`). The ``error`` location is
    the innermost frame of the traceback outside torch and gradprobe.
    """
    if not _torch_type(type(exc)) or not raised_in_torch(exc):
        return None
    try:
        text = str(exc)
    except Exception:  # noqa: BLE001  (a __str__ that fails: nothing to read)
        return None
    finding = explain_text(text, type(exc))
    if finding is None:
        return _worded(exc, text)
    location = _error_location(exc)
    if location is not None:
        finding = replace(finding, locations=(*finding.locations, location))
    if finding.code == "GP103" and location is not None:
        found = blame(exc.__traceback__)
        if not found.in_backward and found.cause is not None:
            # saved tensors read outside any backward (ctx.saved_tensors, a grad_fn's
            # _saved_ attribute) after backward freed them: the reading line is to change
            finding = replace(
                finding,
                message=(
                    "Saved tensors were read here after backward() had freed them: a graph "
                    "keeps what it saved only until the backward pass that uses it."
                ),
                hint=(
                    "Read them before backward() (or inside the backward that uses them), or "
                    "pass retain_graph=True to the backward() that runs first."
                ),
                locations=(replace(location, role="cause"), location),
            )
    return finding


def _torch_type(kind: type[BaseException]) -> bool:
    """A type torch raises: the builtin itself, or a subclass torch defines
    (``torch.OutOfMemoryError``); not a subclass of the user's or gradprobe's."""
    if kind in EXCEPTION_TYPES:
        return True
    module = getattr(kind, "__module__", None) or ""
    return issubclass(kind, EXCEPTION_TYPES) and module.partition(".")[0] == "torch"


def explain_text(text: str, kind: type[BaseException] = RuntimeError) -> Finding | None:
    """What torch's error text means, for an error of type ``kind`` already known to be
    torch's (:func:`explain_error` decides that); None if not recognized."""
    if not issubclass(kind, EXCEPTION_TYPES) or issubclass(kind, AutogradError):
        return None
    finding = _from_text(text) if issubclass(kind, RuntimeError) else None
    if finding is None:
        plain = explain_plain(text)
        if plain is None:
            return None
        finding = make_finding(plain[0], message=plain[1])
    return finding


def _worded(exc: BaseException, text: str) -> Finding | None:
    """A torch error the catalogue explains in words (GP168), its cause from the traceback."""
    entry = worded_entry(text)
    if entry is None:
        return None
    found = blame(exc.__traceback__)
    locations = _locations((found.cause, "cause"), (found.error, "error"))
    return worded_finding(entry, text, locations, {})


def worded_finding(
    entry: Entry, text: str, locations: Sequence[Location], details: Mapping[str, object]
) -> Finding:
    """The GP168 finding of a worded catalogue entry: torch's first line, then what it means;
    the entry's fix as the hint. The one place these words are put together."""
    return make_finding(
        "GP168",
        message=f"torch: {text.splitlines()[0][:300] if text else ''}\n{entry.meaning}",
        hint=entry.fix,
        details={**details, "entry": entry.key},
        locations=tuple(locations),
    )


def _from_text(text: str) -> Finding | None:
    version = parse_version_error(text)
    if version is not None:
        tensor = version.description
        if version.grad_fn is None:
            what = (
                "it has no grad_fn (a leaf or an input), so it was written in place under "
                "torch.no_grad() or inference_mode, or by optimizer.step() if it is a parameter"
            )
        else:
            what = _WRITERS.get(version.grad_fn) or (
                f"it is output {version.output} of {version.grad_fn}, which was modified in "
                f"place after it was saved; {version.grad_fn} often saves its own output "
                "(sigmoid, exp, tanh, relu, softmax do), so an in-place op right after it "
                "(relu_, nn.ReLU(inplace=True), +=) breaks it"
            )
        return make_finding(
            "GP101",
            message=(
                f"A tensor saved for backward, [{tensor}], was modified in place: it was saved "
                f"at version {version.version_saved} and is at version {version.version_now} "
                f"now; {what}."
            ),
            tensor=tensor,
            details={
                "shape": list(version.shape),
                "version_saved": version.version_saved,
                "version_now": version.version_now,
                "grad_fn_now": version.grad_fn,
                "is_leaf": version.grad_fn is None,
            },
        )
    match = LEAF_INPLACE_ERROR.search(text)
    if match is not None:
        if match.group(0).startswith("leaf variable has been moved"):
            message = (
                "A leaf that requires grad was turned into a non-leaf by an in-place operation "
                "(requires_grad_(False) then an in-place op with a tensor that requires grad) "
                "after a graph using it was built; backward through that graph fails."
            )
        else:
            what = "a view of a leaf" if match["view"] else "a leaf tensor"
            message = (
                f"An in-place operation was applied to {what} that requires grad (a parameter "
                "or an input created with requires_grad=True) outside torch.no_grad()."
            )
        return make_finding("GP102", message=message)
    if FREED_ERROR in text:
        return make_finding(
            "GP103",
            message=(
                "backward() (or autograd.grad) already ran through part of this graph and "
                "released its saved tensors; this second pass reached them. Usually a tensor "
                "from the previous iteration (a hidden state, a running loss) was reused "
                "without .detach(), or backward was called twice."
            ),
        )
    match = NO_GRAD_FN_ERROR.search(text)
    if match is not None:
        return make_finding(
            "GP104",
            message=(
                f"Tensor {match['index']} passed to backward() does not require grad and has "
                "no grad_fn: nothing connects it to a parameter that requires grad."
            ),
        )
    for marker, why in _VIEW_INPLACE:
        if marker in text:
            return make_finding(
                "GP124",
                message=(
                    f"A view that autograd cannot follow was modified in place: {why}. "
                    "Autograd can rebase an ordinary view onto its base after an in-place "
                    "write, but not this one, so it refuses."
                ),
            )
    if INTEGER_GRAD_ERROR.search(text):
        return make_finding(
            "GP125",
            message=(
                "requires_grad=True was asked of a tensor with an integer (or bool) dtype; "
                "only floating-point and complex tensors can have gradients. An integer "
                "literal makes an integer tensor: torch.tensor(10) is int64, "
                "torch.tensor(10.0) is float32."
            ),
        )
    if NON_LEAF_FLAG_ERROR in text:
        return make_finding(
            "GP126",
            message=(
                "requires_grad was set on a tensor computed by an operation (a non-leaf). "
                "Its requires_grad follows from its inputs and cannot be switched: to get "
                "its .grad call .retain_grad(); to cut it from the graph use .detach(); to "
                "make a new leaf use .detach().requires_grad_()."
            ),
        )
    if NONSCALAR_ERROR in text:
        return make_finding(
            "GP105",
            message=(
                "backward() was called without a gradient on a tensor with more than one "
                "element; autograd can only start from 1.0 for a single-element tensor."
            ),
        )
    return None


def _error_location(exc: BaseException) -> Location | None:
    location = None
    tb = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        filename = str(Path(code.co_filename).resolve()) if code.co_filename else ""
        if filename and not filename.startswith(_SKIP_DIRS) and not filename.startswith("<"):
            text = linecache.getline(code.co_filename, tb.tb_lineno).strip() or None
            location = Location(
                file=shown_file(code.co_filename),
                line=tb.tb_lineno,
                role="error",
                function=code.co_name,
                text=text,
            )
        tb = tb.tb_next
    return location


# -- the re-raised exception ------------------------------------------------------------------
