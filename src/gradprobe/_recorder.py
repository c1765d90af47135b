"""The machinery of ``gradprobe.record()``: what runs while the user's code runs.

A :class:`~torch.overrides.TorchFunctionMode` sees every torch call made from Python with
the user's stack still in place (NOTE [recorder] below); a few patches see what no torch
function does (``nn.Parameter`` construction, attribute typos on tensors, optimizer steps,
module calls). Everything recorded is plain data: names, shapes, versions, storage
addresses and source lines. Tensors are held only through weak references; autograd
nodes only through :mod:`gradprobe._deepfree`, which releases them when nothing else does.

NOTE [recorder]
Per call, the mode does the cheap part eagerly and everything else lazily:

- an in-place candidate (a name ending in ``_``, ``__setitem__``, ``out=``,
  ``inplace=True``) has its target's ``_version`` read before and after; only a changed
  version is a write (so ``requires_grad_`` is not one);
- a result whose ``grad_fn`` is new is a new node: its creating line, and for each saved
  slot the version and storage at save time (read through ``_raw_saved_*``, which never
  checks versions). Nodes made inside the same call (a composite op) are found by walking
  down ``next_functions`` to nodes older than the call;
- a result that does not require grad although an input did is a cut (``detach``,
  ``argmax``, comparisons, ``no_grad``), and results computed from cut values carry the
  cut along ("taint"), so a constant loss term can name the line that cut it;
- with ``check_nan``, floating results are checked for NaN/Inf until the first NaN.

Only a new node, a write, a cut or a non-finite value costs a stack walk.
Autograd nodes cannot be weakly referenced; they are keyed by ``(name, sequence_nr)``, the
key :class:`~gradprobe.graph.Node` also carries, so a traced graph can be joined with what
was recorded.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import math
import os
import sys
import textwrap
import warnings
import weakref
from collections import OrderedDict, deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import CodeType, FrameType, TracebackType
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import torch
from torch.overrides import TorchFunctionMode

from gradprobe import _customfn, _deepfree, _window
from gradprobe._compat import INFERENCE_SAVED_ERROR, OVERLAPPING_WRITE_ERROR
from gradprobe._inputs import asked_inputs
from gradprobe._source import is_gradprobe_file, is_user_file
from gradprobe._stalegrad import StaleGrads
from gradprobe._threads import backward_ended, backward_started
from gradprobe.trace import _Plan as _trace_plan
from gradprobe.trace import live_nodes
from gradprobe.trace import trace as _trace

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = ["Events", "NodeKey", "RecorderMode", "SourceLine", "frameless", "passes_calls_on"]

_V = TypeVar("_V")
NodeKey = tuple[str, int]
SourceLine = tuple[str, int, str]  # (co_filename, line, function)

_MAX_NODES = 500_000
_MAX_EVENTS = 100_000
_BAND = _deepfree.BAND
_NO_SEQUENCE = 2**64 - 1
_Plan = _trace_plan


@dataclass(slots=True)
class NodeRecord:
    """One autograd node made while recording."""

    order: int
    line: SourceLine | None
    op: str
    saves: dict[str, tuple[int, int]]  # slot -> (version at save, storage address)
    consumers: list[NodeKey] = field(default_factory=list)
    # the line that called the outermost module running when this node was made (the
    # `y, h = model(x, h)` of a loop), when it was made inside a module's forward
    outer_line: SourceLine | None = None


@dataclass(slots=True, frozen=True)
class Write:
    """An in-place write that moved a version counter (or any write through ``out=``)."""

    order: int
    line: SourceLine | None
    op: str
    storage: int
    version_before: int | None
    version_after: int | None
    shape: tuple[int, ...]
    is_leaf: bool
    requires_grad: bool
    in_optimizer: bool
    grad_enabled: bool
    # where the module doing the write was built, when it writes because it was built with
    # inplace=True (nn.ReLU(inplace=True)): that argument is what the user should change
    module_line: SourceLine | None = None


@dataclass(slots=True, frozen=True)
class Cut:
    """A point where a value that required grad produced one that does not."""

    ident: int
    order: int
    line: SourceLine | None
    op: str
    kind: str  # "detach", "no_grad", "non_differentiable", "parameter", "item", ...
    context: SourceLine | None = None  # for no_grad: where grad mode was turned off


@dataclass(slots=True, frozen=True)
class Mix:
    """A value without grad, derived from a cut, combined additively into one with grad."""

    order: int
    line: SourceLine | None
    op: str
    cuts: frozenset[int]


@dataclass(slots=True, frozen=True)
class GradRead:
    """``.grad`` read on a non-leaf tensor that returned None."""

    order: int
    line: SourceLine | None
    node: NodeKey | None
    shape: tuple[int, ...]
    reparam: Reparam | None = None  # the tensor is recomputed from this parameter


@dataclass(slots=True, frozen=True)
class Reparam:
    """A parameter a module's tensor is recomputed from in each forward (pruning's
    ``weight_orig``, a parametrization's ``original``), and the line that set it up."""

    line: SourceLine | None
    name: str  # "weight_orig", "parametrizations.weight.original"
    tensor: str  # the recomputed attribute: "weight"
    how: str  # "pruning", "a parametrization"


@dataclass(slots=True, frozen=True)
class NonFinite:
    order: int
    line: SourceLine | None
    op: str
    nan: bool
    shape: tuple[int, ...]
    module: tuple[str, str] | None = None  # ("encoder.linear1", "Linear"); "" for the top
    in_step: bool = False  # made inside an optimizer step (an update by non-finite grads)


@dataclass(slots=True)
class Backward:
    order: int
    line: SourceLine | None
    op: str
    roots: list[NodeKey | None]
    retain_graph: bool
    # what backward() raised; once the recording has seen it, a copy without its traceback
    # (see frameless): the frames hold the user's locals, a model and its data
    error: BaseException | None = None


@dataclass
class CtxWrite:
    """A tensor a custom Function kept on its ctx (not save_for_backward) that was written
    in place between its forward and its backward (GP129)."""

    order: int  # when the Function's apply returned
    line: SourceLine | None  # where it was applied
    function: str
    slot: str  # the ctx attribute
    storage: int
    stored: SourceLine | None  # where forward assigned ctx.<slot>


@dataclass
class Events:
    """Everything recorded, as plain data (no tensors, no nodes)."""

    nodes: OrderedDict[NodeKey, NodeRecord] = field(default_factory=OrderedDict)
    writes: deque[Write] = field(default_factory=lambda: deque(maxlen=_MAX_EVENTS))
    cuts: dict[int, Cut] = field(default_factory=dict)
    mixes: list[Mix] = field(default_factory=list)
    grad_reads: list[GradRead] = field(default_factory=list)
    first_nan: NonFinite | None = None
    first_inf: NonFinite | None = None
    backwards: list[Backward] = field(default_factory=list)
    typos: list[tuple[SourceLine | None, str, str]] = field(default_factory=list)
    parameter_lines: dict[int, SourceLine | None] = field(default_factory=dict)
    module_lines: dict[int, SourceLine | None] = field(default_factory=dict)  # id(module) ->
    module_orders: dict[int, int] = field(default_factory=dict)  # id(module) -> when made
    # requires_grad = False set on a tensor that is not a Parameter: (line, storage address)
    copy_freezes: list[tuple[SourceLine | None, int]] = field(default_factory=list)
    # load_state_dict(strict=False) calls that matched nothing: (line, unexpected, missing)
    empty_loads: list[tuple[SourceLine | None, list[str], list[str]]] = field(default_factory=list)
    # id(optimizer) -> (when made, where)
    optimizer_lines: dict[int, tuple[int, SourceLine | None]] = field(default_factory=dict)
    rewrapped: dict[int, Cut] = field(default_factory=dict)  # id(leaf param) -> cut
    saved_storages: set[int] = field(default_factory=set)
    suspicious: bool = False
    nan_grads: list[tuple[int, str, tuple[int, ...], bool]] = field(default_factory=list)
    last_backward: int = -1  # order of the last backward that completed
    # what has been dropped of old steps in a long recording (gradprobe._window)
    window: _window.Window = field(default_factory=lambda: _window.Window())
    # line -> the backwards (orders) whose graphs it chained onto
    kept_alive: dict[SourceLine, set[int]] = field(default_factory=dict)
    reparams: dict[int, Reparam] = field(default_factory=dict)  # id(parameter) ->
    zeroings: list[SourceLine | None] = field(default_factory=list)  # grads dropped unused
    grads_pending: bool = False  # a backward filled grads that no optimizer step used yet
    steps: int = 0
    amp: bool = False  # a GradScaler scaled a loss: inf gradients are expected
    first_use: dict[int, NodeKey] = field(default_factory=dict)  # id(leaf) -> first node
    cut_inputs: dict[NodeKey, int] = field(default_factory=dict)  # node fed to a cut -> cut
    # a leaf that requires grad (a parameter) fed directly to a cut (`w.data`, a layer run
    # under no_grad, a reentrant checkpoint without grad inputs) -> the cuts, latest last
    leaf_cuts: dict[int, list[int]] = field(default_factory=dict)
    # ids of parameters an optimizer stepped without (starved) and with (fed) a gradient
    starved: set[int] = field(default_factory=set)
    fed: set[int] = field(default_factory=set)
    # ids of parameters of an optimizer that stepped right after a backward with not one
    # of its parameters holding a gradient (a GAN generator trained on fake.detach())
    idle: set[int] = field(default_factory=set)
    # ids of the tensors the latest backward() was asked for (inputs=); None: all leaves
    last_inputs: frozenset[int] | None = None
    exits: list[int] = field(default_factory=list)  # cuts whose values left torch (.numpy())
    nan_node: NodeKey | None = None  # first backward formula that made NaN/Inf from finite
    analyses: list[Any] = field(default_factory=list)  # findings made while running
    # backward() on a leaf that requires grad: (order, backward line, where it was made)
    leaf_backwards: list[tuple[int, SourceLine | None, SourceLine | None]] = field(
        default_factory=list
    )
    # losses given a target that requires grad: (loss line, where the target came from, op)
    grad_targets: list[tuple[SourceLine | None, SourceLine | None, str]] = field(
        default_factory=list
    )
    # log-probabilities multiplied by a weight that requires grad through parameters the
    # log-probability does not reach: (product line, the weight's line, where the weight's
    # graph comes from, how many parameters only the weight reaches)
    weighted_log_probs: list[
        tuple[SourceLine | None, SourceLine | None, SourceLine | None, int]
    ] = field(default_factory=list)
    # custom Functions whose backward returned None for inputs that need a gradient:
    # (Function name, input positions, the backward's return line)
    none_grads: list[tuple[str, list[int], SourceLine | None]] = field(default_factory=list)
    # custom Functions whose backward never reads its grad_output yet returned gradients:
    # (Function name, the backward's return line, its node, whether every gradient that
    # arrived was exactly one, which makes its results right by luck)
    blind_backwards: list[tuple[str, SourceLine | None, NodeKey, bool]] = field(
        default_factory=list
    )
    # tensors kept on a custom Function's ctx and written in place before its backward ran
    ctx_writes: list[CtxWrite] = field(default_factory=list)
    # round/floor/sign/... applied to values that require grad: (line, op)
    flat_ops: list[tuple[SourceLine | None, str]] = field(default_factory=list)
    # modules the user switched to eval() whose parameters an optimizer later stepped with
    # gradients: id(module) -> the eval() line (GP111 when eval() changed nothing)
    eval_trained: dict[int, SourceLine | None] = field(default_factory=dict)
    # cross_entropy/nll_loss given softmax output, BCE-with-logits given sigmoid output:
    # loss line -> (where the softmax/sigmoid was made, the loss, whether it was made
    # inside a module's forward (an nn.Softmax / nn.Sigmoid layer))
    squashed_losses: dict[SourceLine | None, tuple[SourceLine | None, str, bool]] = field(
        default_factory=dict
    )
    # elementwise losses whose input and target broadcast to a bigger tensor (GP135):
    # loss line -> (loss, input shape, target shape, broadcast shape)
    broadcast_losses: dict[
        SourceLine | None,
        tuple[str, tuple[int, ...], tuple[int, ...], tuple[int, ...]],
    ] = field(default_factory=dict)
    # optimizer steps that used gradients still holding an earlier step's (GP134):
    # (the backward that added onto them, the step line)
    stale_steps: list[tuple[SourceLine | None, SourceLine | None]] = field(default_factory=list)
    # frozen parameters (requires_grad turned off) an optimizer step still changed, through
    # a zero .grad kept by zero_grad(set_to_none=False) (GP111): id -> (freeze line, step)
    frozen_steps: dict[int, tuple[SourceLine | None, SourceLine | None]] = field(
        default_factory=dict
    )
    # tensor hooks that wrote in place to the gradient they were given: hook name ->
    # (the line, whether the write failed) (GP309)
    hook_writes: dict[str, tuple[SourceLine | None, bool]] = field(default_factory=dict)
    # .grad reads on leaves that require grad which returned None: line -> (backward calls
    # before the read, what the tensor is, where it was made, its last cut) (GP137)
    none_grad_reads: dict[SourceLine, tuple[int, str, SourceLine | None, int | None]] = field(
        default_factory=dict
    )
    # leaves whose requires_grad was turned on after the graph a backward used was built,
    # read as .grad None (GP136): (requires_grad line, .grad line, backward line, graph line)
    late_leaves: list[
        tuple[SourceLine | None, SourceLine | None, SourceLine | None, SourceLine | None]
    ] = field(default_factory=list)
    # functional dropouts left at training=True that ran in a module in eval mode:
    # line -> the module's class (GP132)
    eval_dropouts: dict[SourceLine, str] = field(default_factory=dict)
    # modules stepped while still in eval mode after having trained in train mode:
    # id(module) -> (the eval() line, the user's last train() line before it) (GP131)
    eval_mode_steps: dict[int, tuple[SourceLine | None, SourceLine | None]] = field(
        default_factory=dict
    )
    # nn.Parameter(p.clone()) of another parameter p: (line, id(p), id(new parameter))
    parameter_copies: list[tuple[SourceLine | None, int, int]] = field(default_factory=list)
    # clip_grad_norm_/clip_grad_value_ called with no fresh gradients: lines
    early_clips: list[SourceLine | None] = field(default_factory=list)
    # a GradScaler scaled a loss and nothing unscaled its gradients yet; clipping then
    # (the lines) measures gradients multiplied by the scale
    scaled_pending: bool = False
    scaled_clips: list[SourceLine | None] = field(default_factory=list)
    # ops that refused an inference tensor: (line, cuts that made the tensor)
    inference_uses: list[tuple[SourceLine | None, tuple[int, ...]]] = field(default_factory=list)
    # Tensor.register_hook calls by the hook's __name__: (register line, the line the hook
    # returns its new gradient from, or its def line)
    tensor_hooks: dict[str, tuple[SourceLine | None, SourceLine | None]] = field(
        default_factory=dict
    )


def _names(func: Any) -> str:
    return getattr(func, "__name__", "") or ""


_GRAD_GET: Any = torch._C.TensorBase.__dict__["grad"].__get__
_BACKWARDS = {torch.Tensor.backward: "backward", torch.autograd.backward: "backward"}
_GRAD = torch.autograd.grad
_ADDITIVE = frozenset(
    {"add", "__add__", "__radd__", "add_", "__iadd__", "sub", "__sub__", "__rsub__", "sub_"}
)
_SCALARS = frozenset({"item", "tolist", "numpy"})
# Backward formulas that turn finite gradients into NaN/Inf at the edge of their domain.
_RISKY = frozenset(
    {
        "SqrtBackward0",
        "RsqrtBackward0",
        "PowBackward0",
        "PowBackward1",
        "PowBackward2",
        "DivBackward0",
        "DivBackward1",
        "ReciprocalBackward0",
        "LogBackward0",
        "Log2Backward0",
        "Log10Backward0",
        "Log1PBackward0",
        "NormBackward0",
        "NormBackward1",
        "LinalgVectorNormBackward0",
        "CdistBackward0",
        "AcosBackward0",
        "AsinBackward0",
        "AtanhBackward0",
        "Atan2Backward0",
        "XlogyBackward0",
    }
)
_NOT_WRITES = frozenset({"requires_grad_", "retain_grad", "share_memory_", "record_stream"})


# Kinds of call, cached per function object.
def _NUMPY_EXIT() -> None:
    """Stands for a round trip through numpy in :class:`Cut` records."""


_NUMPY_EXIT.__name__ = "numpy"
_CUSTOM_NODE = torch.autograd.function.BackwardCFunction
_F = torch.nn.functional
# losses that apply their own (log-)softmax or sigmoid -> the node that must not feed them
_WANT_LOGITS = {
    getattr(_F, name): node
    for name, node in (
        ("cross_entropy", "SoftmaxBackward0"),
        ("nll_loss", "SoftmaxBackward0"),
        ("binary_cross_entropy_with_logits", "SigmoidBackward0"),
    )
    if hasattr(_F, name)
}
# elementwise losses that broadcast input and target (torch only warns) (GP135)
_ELEMENTWISE_LOSSES = frozenset(
    getattr(_F, name)
    for name in ("mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss")
    if hasattr(_F, name)
)
# shape-only nodes GP133 looks through between a softmax or sigmoid and the loss
_SHAPE_NODES = frozenset(
    {
        "ViewBackward0",
        "UnsafeViewBackward0",
        "ReshapeAliasBackward0",
        "TransposeBackward0",
        "PermuteBackward0",
        "SqueezeBackward0",
        "SqueezeBackward1",
        "UnsqueezeBackward0",
        "CloneBackward0",
    }
)
# losses whose second argument is a target that should not carry gradients
_LOSS_TARGETS = frozenset(
    getattr(_F, name)
    for name in (
        "mse_loss",
        "l1_loss",
        "smooth_l1_loss",
        "huber_loss",
        "kl_div",
        "binary_cross_entropy",
        "binary_cross_entropy_with_logits",
        "cross_entropy",
        "nll_loss",
    )
    if hasattr(_F, name)
)
# Python functions whose warnings name their caller's line (stacklevel): under the mode
# that caller is the recorder, so their warnings are re-issued at the user's line
_WARNS_AT_CALLER = _LOSS_TARGETS | frozenset(
    getattr(_F, name) for name in ("softmax", "log_softmax", "softmin") if hasattr(_F, name)
)
# log-probabilities of chosen actions (score-function terms): the full output of
# log_softmax, then the entries picked from it by an index tensor; ops that keep either
_LOG_SOFTMAX = frozenset((_F.log_softmax, torch.log_softmax, torch.Tensor.log_softmax))
_PICK = frozenset(
    (
        torch.gather,
        torch.Tensor.gather,
        torch.take_along_dim,
        torch.Tensor.take_along_dim,
        torch.index_select,
        torch.Tensor.index_select,
        torch.Tensor.__getitem__,
    )
)
_RESHAPES = frozenset(
    (
        torch.squeeze,
        torch.Tensor.squeeze,
        torch.unsqueeze,
        torch.Tensor.unsqueeze,
        torch.Tensor.view,
        torch.reshape,
        torch.Tensor.reshape,
        torch.flatten,
        torch.Tensor.flatten,
    )
)
_KEEP_LOG_PROB = _RESHAPES | frozenset(
    (
        torch.sum,
        torch.Tensor.sum,
        torch.neg,
        torch.Tensor.neg,
        torch.Tensor.__neg__,
        torch.Tensor.clone,
        torch.Tensor.contiguous,
    )
)
_JOIN = frozenset((torch.stack, torch.cat, torch.concat))
# sampled actions: what the log-probability is of (not data, whose weighted log-likelihood
# may be trained on purpose), and the ops that keep a sample a sample
_SAMPLERS = frozenset((torch.multinomial, torch.Tensor.multinomial, torch.bernoulli))
_KEEP_SAMPLE = _RESHAPES | frozenset(
    (
        torch.Tensor.long,
        torch.Tensor.to,
        torch.Tensor.clone,
        torch.Tensor.detach,
        torch.Tensor.__getitem__,
    )
)
_LOG_PROB_START = _LOG_SOFTMAX | _SAMPLERS
_PRODUCTS = frozenset(
    (
        torch.mul,
        torch.multiply,
        torch.Tensor.mul,
        torch.Tensor.multiply,
        torch.Tensor.__mul__,
        torch.Tensor.__rmul__,
    )
)
_MAX_WALK = 20_000  # graph nodes walked to compare the parameters two operands reach
# differentiable ops whose derivative is zero almost everywhere
_ZERO_DERIVATIVE = frozenset(
    f
    for f in (
        torch.round,
        torch.floor,
        torch.ceil,
        torch.sign,
        torch.trunc,
        torch.Tensor.round,
        torch.Tensor.floor,
        torch.Tensor.ceil,
        torch.Tensor.sign,
        torch.Tensor.trunc,
    )
)
_INFERENCE_SAVED = INFERENCE_SAVED_ERROR
_PLAIN, _INPLACE, _SETITEM, _BACKWARD, _AUTOGRAD_GRAD, _GRAD_READ, _SCALAR, _PRIVATE = range(8)
_DROPOUT = 8
_REQUIRES = 9  # requires_grad_() and the requires_grad setter
_MAX_FROZEN = 64  # frozen parameters followed through one optimizer step
# functional dropouts whose `training` argument defaults to True (GP132)
_DROPOUTS = frozenset(
    getattr(torch.nn.functional, name)
    for name in (
        "dropout",
        "dropout1d",
        "dropout2d",
        "dropout3d",
        "alpha_dropout",
        "feature_alpha_dropout",
    )
    if hasattr(torch.nn.functional, name)
)
# Kinds of torch's own callables, for the life of the process. Callables made at run time
# (gradprobe's patches, which close over one recording's events and mode, or a user's
# function closing over their model) are cached weakly: a module-level cache holding them
# would keep every recording alive.
_kinds: dict[Any, int] = {}
_passing_kinds: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()
_TORCH_DIR = str(Path(torch.__file__).parent) + os.sep


def _lasting(func: Any) -> bool:
    """Whether ``func`` may stay in a module-level cache for good: C functions and
    descriptors, and Python functions of torch's own package."""
    code = getattr(func, "__code__", None)
    if code is None:  # a bound method; a property's __get__/__set__
        inner = getattr(func, "__func__", None) or getattr(
            getattr(func, "__self__", None), "fget", None
        )
        code = getattr(inner, "__code__", None)
    if code is not None:
        return bool(code.co_filename.startswith(_TORCH_DIR))
    return type(func).__module__ == "builtins"  # not a partial or a callable object


def _remember(lasting: dict[Any, _V], passing: Any, func: Any, value: _V) -> None:
    if _lasting(func):
        lasting[func] = value
    else:
        with contextlib.suppress(TypeError):  # not weakly referable: not cached
            passing[func] = value


def _kind(func: Any) -> int:
    try:
        return _kinds[func]
    except KeyError:
        pass
    except TypeError:  # unhashable callables
        return _PLAIN
    with contextlib.suppress(TypeError):
        known = _passing_kinds.get(func)
        if known is not None:
            return known
    name = _names(func)
    if func == _GRAD_GET:
        kind = _GRAD_READ
    elif name == "requires_grad_" or (
        name == "__set__" and _names(getattr(func, "__self__", None)) == "requires_grad"
    ):
        kind = _REQUIRES
    elif name in ("__get__", "__set__") and _names(getattr(func, "__self__", None)).startswith("_"):
        # torch's own private attributes (``_backward_hooks``, set from C++ while it unpacks
        # a saved variable and holds the node's lock): touching the tensor here deadlocks.
        kind = _PRIVATE
    elif getattr(func, "__gradprobe_wraps__", func) in _BACKWARDS:  # watch wraps them
        kind = _BACKWARD
    elif getattr(func, "__gradprobe_wraps__", func) is _GRAD:
        kind = _AUTOGRAD_GRAD
    elif func in _DROPOUTS:
        kind = _DROPOUT
    elif name == "__setitem__":
        kind = _SETITEM
    elif name.endswith("_") and not name.endswith("__") and name not in _NOT_WRITES:
        kind = _INPLACE
    elif name in _SCALARS:
        kind = _SCALAR
    else:
        kind = _PLAIN
    _remember(_kinds, _passing_kinds, func, kind)
    return kind


_THIS_FILE = __file__
# files whose frames only pass a torch call on to the mode: the caller is above them
_PASSING_ON = {_THIS_FILE}


def passes_calls_on(filename: str) -> None:
    """Frames of ``filename`` (gradprobe's patches, dynamo's eager wrapper) only hand the
    user's torch call on: the mode looks above them for the caller."""
    _PASSING_ON.add(filename)


_ours: dict[CodeType, bool] = {}


def _is_ours(code: CodeType) -> bool:
    """Code in gradprobe's own package (not tests or examples): its torch calls are not the
    user's and are not recorded."""
    verdict = _ours.get(code)
    if verdict is None:
        verdict = _ours[code] = is_gradprobe_file(code.co_filename)
    return verdict


def _user_line(frame: FrameType | None) -> SourceLine | None:
    while frame is not None:
        code = frame.f_code
        if is_user_file(code.co_filename):
            return (code.co_filename, frame.f_lineno, code.co_name)
        frame = frame.f_back
    return None


def _tensors(value: Any) -> Iterator[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (tuple, list)):
        for item in value:
            if isinstance(item, torch.Tensor):
                yield item


def _version(tensor: torch.Tensor) -> int | None:
    try:
        return tensor._version
    except RuntimeError:  # inference tensors
        return None


_NEAR_LINES = 3
_NOT_VALUES = frozenset({"size", "dim", "numel", "stride", "__len__", "shape"})
_value_kinds: dict[Any, bool] = {}  # as _kinds: torch's own callables only
_passing_value_kinds: weakref.WeakKeyDictionary[Any, bool] = weakref.WeakKeyDictionary()


_DATA = next(k.__dict__["data"] for k in torch.Tensor.__mro__ if "data" in k.__dict__)
_LEAF_CUTS = 8  # cuts remembered per leaf


def _is_data_get(func: Any) -> bool:
    """``tensor.data``: the mode sees the getter of the ``data`` descriptor."""
    return getattr(func, "__self__", None) is _DATA and _names(func) == "__get__"


def _kind_of_value(func: Any) -> bool:
    """Whether ``func``'s result depends on its inputs' values, so that a result without
    grad is a cut: zeros_like/randn_like/new_ones and shape queries only borrow a shape."""
    try:
        return _value_kinds[func]
    except KeyError:
        with contextlib.suppress(TypeError):
            known = _passing_value_kinds.get(func)
            if known is not None:
                return known
        name = _names(func)
        verdict = not (name.endswith("_like") or name.startswith("new_") or name in _NOT_VALUES)
        _remember(_value_kinds, _passing_value_kinds, func, verdict)
        return verdict
    except TypeError:
        return True


_DRIVERS = tuple(
    os.sep + str(Path("torch", *parts))
    for parts in (("autograd", "functional.py"), ("autograd", "gradcheck.py"), ("_functorch",))
)


def _from_torch_driver(frame: FrameType | None) -> bool:
    """Whether torch code that runs its own backward passes (autograd.functional,
    gradcheck, torch.func) made this call, rather than the user's code directly."""
    while frame is not None:
        filename = frame.f_code.co_filename
        if is_user_file(filename):
            return False
        if any(driver in filename for driver in _DRIVERS):
            return True
        frame = frame.f_back
    return False


def _just_after(exit_line: SourceLine | None, line: SourceLine | None) -> bool:
    """``line`` follows ``exit_line`` closely in the same function: the values that left
    torch there are most likely what comes back here."""
    if exit_line is None or line is None:
        return False
    if exit_line[0] != line[0] or exit_line[2] != line[2]:
        return False
    distance = line[1] - exit_line[1]
    if distance == 0:
        return True
    if not 0 < distance <= _NEAR_LINES:
        return False
    # `d = np.diff(x.detach().numpy())` then `torch.from_numpy(d)`: a name assigned there
    # is read here (a batch loaded from numpy nearby is not the logged value)
    return bool(_names_at(exit_line, store=True) & _names_at(line, store=False))


def _names_at(line: SourceLine, *, store: bool) -> frozenset[str]:
    """Names a one-line statement assigns (``store``) or reads; empty when it is not one."""
    import ast
    import linecache

    text = linecache.getline(line[0], line[1]).strip()
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return frozenset()
    wanted = ast.Store if store else ast.Load
    return frozenset(
        node.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Name) and isinstance(node.ctx, wanted)
    )


def frameless(error: BaseException) -> BaseException:
    """A copy of ``error`` (same type, args, message and attributes) without its traceback,
    cause or context, whose frames would keep the locals of every frame it passed through
    (a model, its data) alive as long as the copy is kept. ``error`` itself is not touched:
    it is the user's, still propagating."""
    kind = type(error)
    copy: BaseException | None = None
    with contextlib.suppress(Exception):
        copy = kind(*error.args)
        if type(copy) is not kind:
            copy = None
    if copy is None:  # an __init__ that does not take its own args back
        try:
            copy = kind.__new__(kind)
            copy.args = error.args
        except Exception:  # noqa: BLE001  (never raise over the user's error)
            return RuntimeError(f"{kind.__name__}: {error}")
    with contextlib.suppress(Exception):
        copy.__dict__.update(
            (key, value)
            for key, value in vars(error).items()
            if not isinstance(value, (TracebackType, FrameType))
        )
    copy.__traceback__ = None
    return copy


def _grad_fn(tensor: torch.Tensor) -> Any:
    """``tensor.grad_fn``, or None where reading it raises.

    A view made under ``no_grad`` whose base was then written in place refuses to rebuild
    its ``grad_fn`` (``nn.Embedding(padding_idx=...)`` makes one while it initialises);
    that is the user's tensor's business, not a reason for the recorder to fail.
    """
    try:
        return tensor.grad_fn
    except RuntimeError:
        return None


def _storage(tensor: torch.Tensor) -> int:
    try:
        return tensor.untyped_storage().data_ptr()
    except (RuntimeError, NotImplementedError):
        return 0


def _run_eagerly_under_dynamo() -> None:
    """Inside ``torch.compile``, dynamo must run the recorder eagerly, not trace it into the
    graph: wrap ``RecorderMode.__torch_function__`` in ``torch._dynamo.disable``, once.

    Only when dynamo is already imported: importing it costs more than importing torch,
    and nothing can be compiled without it. ``record()`` imports it before it enters the
    mode (its module hooks are wrapped the same way), so a ``torch.compile`` inside a
    recording always finds the recorder wrapped. A ``RecorderMode`` entered by other code
    before dynamo's first import stays unwrapped until it is entered again.
    """
    dynamo = sys.modules.get("torch._dynamo")
    if dynamo is None or "__torch_function__" in _WRAPPED:
        return
    _WRAPPED.add("__torch_function__")
    passes_calls_on(dynamo.eval_frame.__file__)  # the wrapper's frame is not the caller
    RecorderMode.__torch_function__ = dynamo.disable(  # type: ignore[method-assign]
        RecorderMode.__dict__["__torch_function__"]
    )


_WRAPPED: set[str] = set()


class RecorderMode(TorchFunctionMode):
    """Records writes, new nodes, saves, cuts and non-finite values (NOTE [recorder])."""

    def __init__(self, events: Events, *, check_nan: bool) -> None:
        super().__init__()
        self.events = events
        self.check_nan = check_nan
        self.order = itertools.count()
        self.plans: dict[type, Any] = {}
        self.taint = _TensorMap[frozenset[int]]()
        self.leaves = _TensorMap[None]()
        # tensors made by a factory with requires_grad=True: torch.tensor(x, requires_grad=True)
        self.made_leaves = _TensorMap[SourceLine | None]()
        # leaves whose requires_grad the user turned on: (order, line) (GP136)
        self.turned_on = _TensorMap[tuple[int, SourceLine | None]]()
        # and turned off, and those an optimizer step is about to see (GP111)
        self.turned_off = _TensorMap[tuple[SourceLine | None]]()
        self.cut_leaves = _TensorMap[int]()  # leaves outside modules -> their last cut

        self.frozen_in_step: list[tuple[torch.Tensor, int, float, SourceLine | None]] = []
        self.step_line: SourceLine | None = None
        # log-probabilities: True once they are of chosen actions (Distribution.log_prob of
        # a sample, or log_softmax entries picked by index), False for a full log_softmax
        self.log_probs = _TensorMap[bool]()
        self.samples = _TensorMap[bool]()  # sampled actions (Distribution.sample, multinomial)
        self.cut_ids: dict[tuple[SourceLine | None, str], int] = {}
        self.cut_storages: dict[int, int] = {}  # storage address of a cut's result -> cut
        self.no_grad_lines: list[SourceLine | None] = []  # where no_grad blocks began
        self.in_optimizer = 0
        self.stale = StaleGrads(events)
        self.mark = _current_sequence()
        # torch >= 2.14: node_creation_hook hands over every node as it is made (NOTE
        # [recorder]); record() installs it and sets `hooked`. Nodes wait here until the
        # torch call that made them returns and its line is known.
        self.hooked = False
        # where values that came through a cut last left torch (.numpy(), .tolist())
        self.last_exit: tuple[SourceLine | None, frozenset[int]] | None = None
        self.optimizers: weakref.WeakSet[Any] = weakref.WeakSet()  # those that stepped
        # module -> the outermost module running when it was called (held weakly)
        self.called_inside: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
        self.outer_ref: Any = None
        self.outer_module = 0  # id of the outermost module running, set by record()'s hooks
        self.outer_line: SourceLine | None = None  # and the line that called it
        self.pending: list[Any] = []
        self.ctx_watched: set[NodeKey] = set()  # custom Function nodes whose ctx is watched
        self.backward_hook: Callable[[Backward, Any, tuple[Any, ...], dict[str, Any]], Any] | None
        self.backward_hook = None
        # torch functions some check wants to see called, and who hands the calls over
        self.watched_ops: Any = {}
        self.op_hook: Callable[[Any, tuple[Any, ...], dict[str, Any], Any, Any], Any] | None
        self.op_hook = None
        # modules the user called eval() (or train(False)) on: id -> (weak ref, line,
        # optimizer steps taken before the call)
        self.evals: dict[int, tuple[weakref.ref[Any], SourceLine | None, int]] = {}
        self.train_lines: dict[int, SourceLine | None] = {}  # id -> the last train() call
        # (the hook dict's weak ref, key, the user's hook) of tensor hooks this recording
        # wrapped; given back when it ends (gradprobe._recorder_patches)
        self.wrapped_hooks: list[tuple[Any, int, Any]] = []

    # -- the hot path ------------------------------------------------------------------------

    def __torch_function__(
        self,
        func: Any,
        types: Any,
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        __tracebackhide__ = True
        if kwargs is None:
            kwargs = {}
        caller = sys._getframe(1)
        while caller.f_code.co_filename in _PASSING_ON and caller.f_back is not None:
            caller = caller.f_back  # an inner recording, or dynamo's eager wrapper
        if _is_ours(caller.f_code):  # gradprobe's own work (watch statistics, trace)
            return func(*args, **kwargs)
        kind = _kind(func)
        if kind == _PRIVATE:
            return func(*args, **kwargs)
        if self.pending:  # made outside any torch call we saw: the best line is this one
            self._take_pending(_user_line(sys._getframe(1)))
        if kind in (_BACKWARD, _AUTOGRAD_GRAD):
            backward_started()  # autograd's worker threads serve this recording
            try:
                return self._backward(func, kind, args, kwargs)
            finally:
                backward_ended()
        if kind == _REQUIRES:
            return self._requires_grad(func, args, kwargs)
        if kind == _DROPOUT and kwargs.get("training", True) and kwargs.get("p", 0.5) != 0:
            self._eval_dropout(func, caller)
        targets: list[torch.Tensor] = []
        if kind == _INPLACE:
            first = args[0] if args else None
            if isinstance(first, torch.Tensor):
                targets.append(first)
            elif isinstance(first, (list, tuple)):  # torch._foreach_*_
                targets.extend(t for t in first if isinstance(t, torch.Tensor))
        elif kind == _SETITEM and args and isinstance(args[0], torch.Tensor):
            targets.append(args[0])
        if kwargs:
            out = kwargs.get("out")
            if out is not None:
                targets.extend(_tensors(out))
            if kwargs.get("inplace") is True and args and isinstance(args[0], torch.Tensor):
                targets.append(args[0])
        before = [_version(t) for t in targets] if targets else None

        grad_in = False
        tensor_in = False
        new_leaves: list[int] | None = None
        for arg in args:
            if isinstance(arg, torch.Tensor):
                tensor_in = True
                if arg.requires_grad:
                    grad_in = True
                    if _grad_fn(arg) is None:
                        ident = id(arg)
                        if ident not in self.leaves.entries:
                            self.leaves.set(arg, None)
                        if ident not in self.events.first_use:
                            new_leaves = [ident] if new_leaves is None else [*new_leaves, ident]
            elif isinstance(arg, (list, tuple)):
                for item in arg:
                    if isinstance(item, torch.Tensor) and item.requires_grad:
                        grad_in = True
                        break

        if kind == _GRAD_READ or func in _WARNS_AT_CALLER:
            result = _warn_from_user(func, args, kwargs)
        else:
            try:
                result = func(*args, **kwargs)
            except RuntimeError as error:  # free unless raised
                if _INFERENCE_SAVED in str(error):
                    self._inference_use(args, kwargs)
                raise

        if self.watched_ops:  # checks that asked for this function's calls
            self._op_checks(func, args, kwargs, result, caller)
        line: Any = False  # a SourceLine (or None) once computed
        events = self.events
        if targets:
            assert before is not None
            for target, was in zip(targets, before, strict=True):
                now = _version(target)
                if now != was:
                    if line is False:
                        line = _user_line(sys._getframe(1))
                    self._write(func, target, was, now, line)
        if grad_in:
            if self.log_probs or func in _LOG_PROB_START:
                self._log_prob_flow(func, args, result)
        elif (
            self.samples
            and func in _KEEP_SAMPLE
            and isinstance(result, torch.Tensor)
            and args
            and self.is_sample(args[0])
        ):
            self.samples.set(result, True)  # actions.unsqueeze(-1), actions.long()
        if grad_in and func in _LOSS_TARGETS:
            self._loss_target(func, args, kwargs)
        elif grad_in and func in _ZERO_DERIVATIVE and len(events.flat_ops) < 100:
            if line is False:
                line = _user_line(sys._getframe(1))
            events.flat_ops.append((line, _names(func)))
        if kind == _GRAD_READ:
            if result is None and args and isinstance(args[0], torch.Tensor):
                tensor = args[0]
                node = _grad_fn(tensor)
                if node is None and tensor.requires_grad:
                    self._none_grad(tensor, caller)
                if node is not None and not tensor.retains_grad:
                    line = _user_line(sys._getframe(1)) if line is False else line
                    # the first read per line is the finding: a loop's later ones add nothing
                    if any(read.line == line for read in events.grad_reads):
                        return result
                    events.grad_reads.append(
                        GradRead(
                            next(self.order),
                            line,
                            (node.name(), node._sequence_nr()),
                            tuple(tensor.shape),
                            _reparam_below(node, events.reparams) if events.reparams else None,
                        )
                    )
            return result
        if kind == _SCALAR:
            if grad_in and args and torch.is_grad_enabled():
                line = _user_line(sys._getframe(1)) if line is False else line
                cut = self._cut(func, "item", line)
                if cut not in events.exits:  # a set, in order: loss.item() every step
                    events.exits.append(cut)
            elif self.taint and args and isinstance(args[0], torch.Tensor):
                cuts = self.taint.get(args[0])
                if cuts:  # t.detach().numpy(): values leave torch after a cut
                    events.exits.extend(cut for cut in cuts if cut not in events.exits)
                    self.last_exit = (_user_line(sys._getframe(1)), cuts)
            return result

        outputs = result if isinstance(result, torch.Tensor) else None
        if kind == _SETITEM and grad_in and outputs is None and isinstance(args[0], torch.Tensor):
            # `queue[i:j] = k`: the written tensor's new CopySlices node joins the graph
            # here; record it with this line like any op's output.
            outputs = args[0]
        many = outputs is None and isinstance(result, (tuple, list))
        if outputs is None and not many:
            return result
        if self.pending:
            if line is False:
                line = _user_line(sys._getframe(1))
            self._take_pending(line)
        if new_leaves is not None:
            made = _grad_fn(result) if isinstance(result, torch.Tensor) else None
            if made is not None:
                for leaf in new_leaves:
                    events.first_use[leaf] = (made.name(), made._sequence_nr())
        start = top = self.mark
        any_grad_out = many and any(t.requires_grad for t in _tensors(result))
        for out in _tensors(result) if many else (outputs,):
            assert out is not None
            fn = _grad_fn(out)
            if fn is not None:
                # With the node-creation hook the node is already recorded (-1 skips it).
                sequence = -1 if self.hooked else fn._sequence_nr()
                if sequence >= start and (fn.name(), sequence) not in events.nodes:
                    if line is False:
                        line = _user_line(sys._getframe(1))
                    # Every output is walked from the mark the call started at: a GRU's
                    # hidden state was made before its output, below the new mark.
                    self.mark = start
                    self._discover(fn, line)
                    top = max(top, self.mark)
            elif (
                grad_in
                and not out.requires_grad
                and not (many and any_grad_out)  # broadcast_tensors(mu, 1.0): no cut
                and _kind_of_value(func)
            ):
                if line is False:
                    line = _user_line(sys._getframe(1))
                cut = self._cut(
                    func,
                    "data"
                    if _is_data_get(func)
                    else "no_grad"
                    if not torch.is_grad_enabled()
                    else ("detach" if _names(func) == "detach" else "non_differentiable"),
                    line,
                )
                self.taint.set(out, frozenset((cut,)))
                if len(self.cut_storages) < _MAX_EVENTS:  # numpy round trips share memory
                    self.cut_storages[_storage(out)] = cut
                for arg in args:
                    for tensor in _tensors(arg):
                        made_by = _grad_fn(tensor)
                        if made_by is not None:
                            events.cut_inputs[(made_by.name(), made_by._sequence_nr())] = cut
                        elif tensor.requires_grad and not self.outer_module:
                            self.cut_leaves.set(tensor, cut)  # x.detach() on an input (GP137)
                        elif tensor.requires_grad:
                            # only inside a module's forward: DDP's init broadcasts
                            # p.detach(), an optimizer reads p.data
                            leaf_cuts = events.leaf_cuts.setdefault(id(tensor), [])
                            if not leaf_cuts or leaf_cuts[-1] != cut:
                                leaf_cuts.append(cut)
                                del leaf_cuts[:-_LEAF_CUTS]
            elif not tensor_in and out.requires_grad:
                if line is False:
                    line = _user_line(sys._getframe(1))
                self.made_leaves.set(out, line)
            elif not tensor_in and self.cut_storages and not out.requires_grad:
                # torch.as_tensor(t.detach().numpy()): new tensor, same memory as the cut.
                # Only from an array: a factory (torch.randn) may get the freed memory of a
                # cut's result at the same address.
                cut_here = (
                    self.cut_storages.get(_storage(out))
                    if any(hasattr(arg, "__array_interface__") for arg in args)
                    else None
                )
                if cut_here is not None:
                    self.taint.set(out, frozenset((cut_here,)))
                elif self.last_exit is not None:
                    # torch.from_numpy(np.diff(t.detach().numpy())): new memory, but made
                    # right after values left torch, a few lines below, in the same function
                    if line is False:
                        line = _user_line(sys._getframe(1))
                    if _just_after(self.last_exit[0], line):
                        self.taint.set(out, self.numpy_cut())
            if (
                self.check_nan
                and tensor_in  # not factories: torch.empty is garbage until written
                and out.requires_grad  # values that can reach a loss, not masks or metrics
                and (kind != _INPLACE or grad_in)  # not optimizer updates
                and events.first_nan is None
                and out.is_floating_point()
            ):
                self._nan(func, out, line)
        self.mark = max(self.mark, top)
        if self.taint:
            line = self._spread(func, args, result, many, line)
        return result

    def __enter__(self) -> Self:
        _run_eagerly_under_dynamo()
        super().__enter__()  # type: ignore[no-untyped-call]
        return self

    # -- pieces ------------------------------------------------------------------------------

    def _op_checks(
        self,
        func: Any,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        result: Any,
        caller: FrameType,
    ) -> None:
        try:
            wanted = func in self.watched_ops
        except TypeError:  # an unhashable callable: no check can have asked for it
            return
        hook = self.op_hook
        if wanted and hook is not None:
            hook(func, args, kwargs, result, _user_line(caller))

    def _write(
        self,
        func: Any,
        target: torch.Tensor,
        was: int | None,
        now: int | None,
        line: SourceLine | bool | None,
    ) -> None:
        events = self.events
        if not self.in_optimizer and _from_torch_driver(sys._getframe(2)):
            return  # gradcheck perturbing its inputs and restoring them: not the user's write
        storage = _storage(target)
        if storage in events.saved_storages:
            events.suspicious = True
        events.writes.append(
            Write(
                order=next(self.order),
                line=line if line is not False else None,  # type: ignore[arg-type]
                op=_names(func),
                storage=storage,
                version_before=was,
                version_after=now,
                shape=tuple(target.shape),
                is_leaf=_grad_fn(target) is None,
                requires_grad=target.requires_grad,
                in_optimizer=self.in_optimizer > 0,
                grad_enabled=torch.is_grad_enabled(),
                module_line=self._inplace_module_line() if events.module_lines else None,
            )
        )
        if (
            not self.in_optimizer
            and target.requires_grad
            and not torch.is_grad_enabled()
            and _grad_fn(target) is None
        ):  # `p -= lr * p.grad` under no_grad: a hand-written optimizer step (GP134)
            with contextlib.suppress(Exception):
                self.stale.manual_step(target, line if line is not False else None)  # type: ignore[arg-type]

    def _inplace_module_line(self) -> SourceLine | None:
        """Where the module writing now was built, if it writes because of ``inplace=True``."""
        frame: FrameType | None = sys._getframe(2)
        for _ in range(8):  # the module's forward is a few frames above the torch call
            if frame is None:
                break
            if frame.f_code.co_varnames[:1] == ("self",):
                owner = frame.f_locals.get("self")
                if isinstance(owner, torch.nn.Module) and getattr(owner, "inplace", False) is True:
                    return self.events.module_lines.get(id(owner))
            frame = frame.f_back
        return None

    def created(self, node: Any) -> None:
        """The node-creation hook (torch >= 2.14): keep the node until its call returns."""
        self.pending.append(node)

    def _take_pending(self, line: SourceLine | None) -> None:
        nodes, self.pending = self.pending, []
        for node in nodes:  # creation order: children first, so edges find their parents
            self._discover(node, line)

    def _discover(self, fn: Any, line: SourceLine | None) -> None:
        """Record ``fn`` and the nodes below it made in the same call."""
        events = self.events
        nodes = events.nodes
        plans = self.plans
        mark = self.mark
        stack: list[tuple[Any, NodeKey | None]] = [(fn, None)]
        highest = mark
        while stack:
            node, parent = stack.pop()
            sequence = node._sequence_nr()
            key = (node.name(), sequence)
            known = nodes.get(key)
            if known is not None:
                if parent is not None:
                    known.consumers.append(parent)
                continue
            if sequence > highest:
                highest = sequence
            plan = plans.get(type(node))
            if plan is None:
                plan = plans[type(node)] = _Plan(node)
            saves: dict[str, tuple[int, int]] = {}
            if plan.custom:
                with contextlib.suppress(RuntimeError, AttributeError):
                    for index, raw in enumerate(node._raw_saved_tensors):
                        self._save(saves, f"saved_tensors[{index}]", raw)
            else:
                for attr, slot, _ in plan.slots:
                    try:
                        raw = getattr(node, attr)
                    except RuntimeError:
                        continue
                    if type(raw) is tuple or isinstance(raw, list):
                        for index, item in enumerate(raw):
                            self._save(saves, f"{slot}[{index}]", item)
                    else:
                        self._save(saves, slot, raw)
            nodes[key] = NodeRecord(
                next(self.order),
                line,
                key[0],
                saves,
                [parent] if parent is not None else [],
                self.outer_line,
            )
            if self.check_nan and key[0] in _RISKY and events.nan_node is None:
                node.register_hook(self._nan_watch(key))
            if isinstance(node, _CUSTOM_NODE):
                node.register_hook(self._custom_watch(node, key))
                if key not in self.ctx_watched:  # not seen by the Function.apply patch
                    self.watch_ctx(node, line)
            band = sequence // _BAND
            hold = None
            for child, _ in node.next_functions:
                if child is None:
                    continue
                child_sequence = child._sequence_nr()
                if child_sequence == _NO_SEQUENCE:
                    continue  # AccumulateGrad: a leaf, childless
                child_key = (child.name(), child_sequence)
                record = nodes.get(child_key)
                if record is not None:
                    record.consumers.append(key)
                    if (
                        record.order < events.last_backward
                        and line is not None
                        and record.line == line
                    ):  # `total += loss`: this line extends a graph already backpropagated
                        events.kept_alive.setdefault(line, set()).add(events.last_backward)
                elif child_sequence >= mark:
                    stack.append((child, key))
                if child_sequence // _BAND != band:
                    hold = [child] if hold is None else [*hold, child]
            if hold is not None:
                _deepfree.protect(hold)
            if len(nodes) > _MAX_NODES:
                nodes.popitem(last=False)
        if highest > mark:
            self.mark = highest + 1

    def _nan_watch(self, key: NodeKey) -> Callable[..., None]:
        """A node hook that notes the first backward formula turning finite gradients into
        NaN/Inf (sqrt or norm at 0, log of 0...). CPU only: on accelerators it would sync."""
        events = self.events

        def check(grad_inputs: tuple[Any, ...], grad_outputs: tuple[Any, ...]) -> None:
            if events.nan_node is not None:
                return
            outs = [g for g in grad_outputs if isinstance(g, torch.Tensor)]
            ins = [g for g in grad_inputs if isinstance(g, torch.Tensor)]
            if not ins or not all(g.device.type == "cpu" and _checkable(g) for g in ins + outs):
                return  # on accelerators it would sync; under vmap it cannot look at values
            if all(_finite(g) for g in outs) and not all(_finite(g) for g in ins):
                events.nan_node = key

        return check

    def _save(self, saves: dict[str, tuple[int, int]], slot: str, raw: Any) -> None:
        tensor = getattr(raw, "data", raw)
        if not isinstance(tensor, torch.Tensor):
            return
        version = _version(tensor)
        if version is None:
            return
        storage = _storage(tensor)
        saves[slot] = (version, storage)
        if storage:
            self.events.saved_storages.add(storage)

    def numpy_cut(self) -> frozenset[int]:
        """The cuts of values that left torch at the last exit and came back just now,
        plus the round trip itself, where the graph was really lost."""
        assert self.last_exit is not None
        line, cuts = self.last_exit
        return cuts | {self._cut(_NUMPY_EXIT, "numpy", line)}

    def _custom_watch(self, node: Any, key: NodeKey) -> Callable[..., None]:
        """A custom Function's backward that returns None for an input that needs a
        gradient (the parameter behind it silently gets none), or that computed gradients
        without reading the one it was given (see gradprobe._customfn)."""
        needs = [child is not None for child, _ in node.next_functions]
        function = getattr(node, "_forward_cls", None)
        name = getattr(function, "__name__", "Function")
        blind = function is not None and _customfn.ignores_grad_outputs(function)
        events = self.events

        def watch(grad_inputs: tuple[Any, ...], grad_outputs: tuple[Any, ...]) -> None:
            missing = [
                index
                for index, (grad, needed) in enumerate(zip(grad_inputs, needs, strict=False))
                if grad is None and needed
            ]
            if missing and len(events.none_grads) < 10:
                backward = getattr(function, "backward", None)
                events.none_grads.append((name, missing, _return_line(backward)))
            if blind and not any(seen[0] == name for seen in events.blind_backwards):
                grads = [g for g in grad_inputs if isinstance(g, torch.Tensor)]
                if any(_unknown_or_nonzero(g) for g in grads):
                    arrived = [g for g in grad_outputs if isinstance(g, torch.Tensor)]
                    ones = bool(arrived) and all(_all_ones(g) for g in arrived)
                    backward = getattr(function, "backward", None)
                    events.blind_backwards.append((name, _return_line(backward), key, ones))

        return watch

    def watch_ctx(self, node: Any, line: SourceLine | None) -> None:
        """Tensors kept on a custom Function's ctx: a node pre-hook compares their versions
        just before the backward reads them (autograd only checks save_for_backward's).
        Called by the Function.apply patch as the call returns (and at discovery for a
        Function that bypassed it)."""
        key = (node.name(), node._sequence_nr())
        if key in self.ctx_watched:
            return
        self.ctx_watched.add(key)
        function = getattr(node, "_forward_cls", None)
        if function is None or getattr(function, "__module__", "").startswith("torch."):
            return  # torch's own (checkpoint, hooks) keep only what they manage themselves
        found = _customfn.ctx_tensors(node)
        if not found:
            return
        order = next(self.order)
        watched = [
            (slot, weakref.ref(tensor), version, _storage(tensor))
            for slot, (tensor, version) in found.items()
        ]
        del found
        events = self.events
        name = getattr(function, "__name__", "Function")

        def check(_grad_outputs: tuple[Any, ...]) -> None:
            for slot, ref, version, storage in watched:
                tensor = ref()
                if tensor is None or len(events.ctx_writes) >= 10:
                    continue
                with contextlib.suppress(RuntimeError):
                    if tensor._version != version:
                        stored = _customfn.ctx_store_line(function, slot)
                        events.ctx_writes.append(CtxWrite(order, line, name, slot, storage, stored))

        node.register_prehook(check)

    def _loss_target(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        """A loss whose target requires grad: note where the target's graph comes from.
        Also a loss that takes logits given softmax or sigmoid output (GP133)."""
        squash = _WANT_LOGITS.get(func)
        if squash is not None:
            scores = kwargs.get("input", args[0] if args else None)
            node = _grad_fn(scores) if isinstance(scores, torch.Tensor) else None
            for _ in range(4):  # probs.view(-1, C) after the softmax, as in language models
                if node is None or node.name() not in _SHAPE_NODES:
                    break
                node = node.next_functions[0][0] if node.next_functions else None
            if node is not None and node.name() == squash:
                events = self.events
                line = _user_line(sys._getframe(2))
                if len(events.squashed_losses) < 10 and line not in events.squashed_losses:
                    record = events.nodes.get((node.name(), node._sequence_nr()))
                    made = record.line if record is not None else None
                    inner = record is not None and made == record.outer_line
                    events.squashed_losses[line] = (made, _names(func), inner)
        target = kwargs.get("target", args[1] if len(args) > 1 else None)
        if func in _ELEMENTWISE_LOSSES:
            self._broadcast_loss(func, kwargs.get("input", args[0] if args else None), target)
        if not isinstance(target, torch.Tensor) or not target.requires_grad:
            return
        events = self.events
        line = _user_line(sys._getframe(2))
        if any(seen == line for seen, _, _ in events.grad_targets):
            return
        events.grad_targets.append((line, self._origin(target), _names(func)))

    def _requires_grad(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """``x.requires_grad_()`` / ``x.requires_grad = True``: note where a leaf started to
        require grad, for a ``.grad`` read that finds None (GP136)."""
        tensor = args[0] if args else None
        was = isinstance(tensor, torch.Tensor) and tensor.requires_grad
        result = func(*args, **kwargs)
        if not isinstance(tensor, torch.Tensor) or _grad_fn(tensor) is not None:
            return result
        if not was and tensor.requires_grad:
            self.turned_on.set(tensor, (next(self.order), _user_line(sys._getframe(2))))
        elif was and not tensor.requires_grad:  # frozen: does an optimizer still move it?
            self.turned_off.set(tensor, (_user_line(sys._getframe(2)),))
        return result

    def _none_grad(self, tensor: torch.Tensor, caller: FrameType) -> None:
        """``.grad`` of a leaf that requires grad is None: note the read, for a script that
        then fails on the None (GP137), and check a late requires_grad (GP136)."""
        events = self.events
        if len(events.none_grad_reads) < 20:
            line = _user_line(caller)
            if line is not None and line not in events.none_grad_reads:
                made = self.made_leaves.get(tensor)
                cut = self.cut_leaves.get(tensor)
                calls = len(events.backwards) + events.window.dropped_backwards
                events.none_grad_reads[line] = (calls, _describe(tensor), made, cut)
        if self.turned_on:
            self._late_leaf(tensor, caller)

    def _late_leaf(self, tensor: torch.Tensor, caller: FrameType) -> None:
        """``.grad`` of a leaf is None: if its requires_grad was turned on after the graph of
        the backward since was built, that graph cannot contain it (GP136)."""
        turned = self.turned_on.get(tensor)
        events = self.events
        if turned is None or len(events.late_leaves) >= 5:
            return
        order, line = turned
        backward = next(
            (b for b in reversed(events.backwards) if b.order > order and b.error is None), None
        )
        if backward is None or any(late[0] == line for late in events.late_leaves):
            return
        before = max((b.order for b in events.backwards if b.order < order), default=-1)
        first = None  # the first node of that backward's forward, made before requires_grad
        for record in reversed(events.nodes.values()):
            if record.order <= before:
                break
            if record.order < order:
                first = record
        if first is not None:
            read = _user_line(caller)
            events.late_leaves.append((line, read, backward.line, first.line))

    def _broadcast_loss(self, func: Any, scores: Any, target: Any) -> None:
        """An elementwise loss whose input and target broadcast to more elements than either
        ((N, 1) against (N,) gives (N, N)): GP135."""
        if not isinstance(scores, torch.Tensor) or not isinstance(target, torch.Tensor):
            return
        if scores.shape == target.shape:
            return
        try:
            shape = torch.broadcast_shapes(scores.shape, target.shape)  # type: ignore[no-untyped-call]
        except RuntimeError:  # torch raises its own error
            return
        if shape.numel() <= max(scores.numel(), target.numel()):
            return  # a scalar or a broadcast row against the full tensor
        events = self.events
        line = _user_line(sys._getframe(3))
        if len(events.broadcast_losses) < 10 and line not in events.broadcast_losses:
            events.broadcast_losses[line] = (
                _names(func),
                tuple(scores.shape),
                tuple(target.shape),
                tuple(shape),
            )

    def _origin(self, tensor: torch.Tensor) -> SourceLine | None:
        """Where a tensor's graph comes from: the first node below it made inside a module
        (the line that called the model, ``q_net(s_next)``), else its own node's line."""
        origin: SourceLine | None = None
        fn = _grad_fn(tensor)
        queue = [fn] if fn is not None else []
        for _ in range(200):
            if not queue:
                break
            node = queue.pop(0)
            record = self.events.nodes.get((node.name(), node._sequence_nr()))
            if record is not None:
                if record.outer_line is not None:
                    return record.outer_line
                if origin is None:
                    origin = record.line
            queue.extend(child for child, _ in node.next_functions if child is not None)
        return origin

    def is_sample(self, value: Any) -> bool:
        """Whether ``value`` is a tensor of sampled actions."""
        return isinstance(value, torch.Tensor) and bool(self.samples.get(value))

    def _log_prob_flow(self, func: Any, args: tuple[Any, ...], result: Any) -> None:
        """Follow log-probabilities of chosen actions into a product with a weight that
        requires grad through parameters of its own (an advantage left attached to the
        critic): noted in ``events.weighted_log_probs``."""
        if not isinstance(result, torch.Tensor) or not args:
            return
        log_probs = self.log_probs
        if func in _LOG_SOFTMAX:
            log_probs.set(result, False)
            return
        if func in _SAMPLERS:
            self.samples.set(result, True)
            return
        first = args[0]
        if func in _JOIN:  # torch.stack(saved_log_probs)
            marks = [log_probs.get(t) for t in _tensors(first)]
            if marks and all(mark is not None for mark in marks):
                log_probs.set(result, all(marks))
            return
        if func in _KEEP_LOG_PROB or func in _PICK:
            chosen = log_probs.get(first) if isinstance(first, torch.Tensor) else None
            if chosen is None:
                return
            if not chosen and func in _PICK:  # entries picked by sampled actions
                index = args[1:] if func is not torch.Tensor.__getitem__ else _tensors(args[1])
                chosen = any(self.is_sample(i) for i in index)
            log_probs.set(result, chosen)
            return
        if func not in _PRODUCTS or len(args) < 2:
            return
        second = args[1]
        if not isinstance(first, torch.Tensor) or not isinstance(second, torch.Tensor):
            return
        if log_probs.get(first):
            log_prob, weight = first, second
        elif log_probs.get(second):
            log_prob, weight = second, first
        else:
            return
        if log_probs.get(weight) is not None or _grad_fn(weight) is None:
            return
        events = self.events
        if len(events.weighted_log_probs) >= _MAX_EVENTS:
            return
        own = set(_leaves_below(weight, _MAX_WALK, parameters=True)) - set(
            _leaves_below(log_prob, _MAX_WALK, parameters=True)
        )
        if not own:
            return  # entropy terms (probs * log_probs) reach the same parameters
        line = _user_line(sys._getframe(2))
        if any(seen == line for seen, _, _, _ in events.weighted_log_probs):
            return
        fn = _grad_fn(weight)
        record = events.nodes.get((fn.name(), fn._sequence_nr()))
        made = record.line if record is not None else line
        events.weighted_log_probs.append((line, made, self._origin(weight), len(own)))

    def _inference_use(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        """An op refused a tensor made under inference_mode: note it and where it was cut."""
        cuts: set[int] = set()
        for value in (*args, *kwargs.values()):
            for tensor in _tensors(value):
                if tensor.is_inference():
                    cuts |= self.taint.get(tensor) or frozenset()
        line = _user_line(sys._getframe(2))
        self.events.inference_uses.append((line, tuple(sorted(cuts))))

    def _eval_dropout(self, func: Any, caller: FrameType) -> None:
        """A functional dropout left at its default training=True, run inside the forward
        of a module in eval mode: dropout stays on at inference (GP132)."""
        frame: FrameType | None = caller
        while frame is not None and not is_user_file(frame.f_code.co_filename):
            frame = frame.f_back
        owner = frame.f_locals.get("self") if frame is not None else None
        if frame is None or not isinstance(owner, torch.nn.Module) or owner.training:
            return
        line = _user_line(frame)
        found = self.events.eval_dropouts
        if line is None or line in found or len(found) >= _MAX_EVENTS:
            return
        if _defaults_training(line, _names(func)):
            found[line] = type(owner).__name__

    def _cut(self, func: Any, kind: str, line: SourceLine | None) -> int:
        op = "data" if kind == "data" else _names(func)
        key = (line, kind)
        ident = self.cut_ids.get(key)
        if ident is None:
            ident = self.cut_ids[key] = len(self.cut_ids)
            context = self.no_grad_lines[-1] if kind == "no_grad" and self.no_grad_lines else None
            self.events.cuts[ident] = Cut(ident, next(self.order), line, op, kind, context)
        return ident

    def _nan(self, func: Any, out: torch.Tensor, line: Any) -> None:
        if not _checkable(out):
            return
        try:
            if out.device.type != "cpu" or out.numel() == 0:
                return  # NOTE: deferred checks for accelerators are not implemented yet
            out = out.detach()
            if _finite(out):
                return
        except (RuntimeError, ValueError, NotImplementedError):
            return  # a tensor that cannot be reduced here: not ours to check
        events = self.events
        nan = bool(torch.isnan(out).any())
        if line is False:
            line = _user_line(sys._getframe(2))
        event = NonFinite(
            next(self.order),
            line,
            _names(func),
            nan,
            tuple(out.shape),
            _running_module(),
            self.in_optimizer > 0,
        )
        if nan:
            events.first_nan = event
        if events.first_inf is None and (not nan or bool(torch.isinf(out).any())):
            events.first_inf = event

    def _spread(self, func: Any, args: tuple[Any, ...], result: Any, many: bool, line: Any) -> Any:
        taint = self.taint
        found: frozenset[int] = frozenset()
        plain_tainted = False
        for arg in args:
            for tensor in _tensors(arg):
                cuts = taint.get(tensor)
                if cuts:
                    found |= cuts
                    if not tensor.requires_grad:
                        plain_tainted = True
        if not found:
            return line
        outs = list(_tensors(result)) if many else [result]
        if any(out.requires_grad for out in outs):
            if plain_tainted and _names(func) in _ADDITIVE and torch.is_grad_enabled():
                if line is False:
                    line = _user_line(sys._getframe(2))
                # the first per line is the finding: `q - (r + gamma * q_next.detach())`
                # runs every step of a DQN loop
                if not any(mix.line == line for mix in self.events.mixes):
                    self.events.mixes.append(Mix(next(self.order), line, _names(func), found))
            return line
        for out in outs:
            if taint.get(out) is None:
                taint.set(out, found)
        return line

    # -- backward ----------------------------------------------------------------------------

    def _backward(self, func: Any, kind: int, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        line = _user_line(sys._getframe(1))
        roots_arg = args[0] if args else kwargs.get("tensors", kwargs.get("outputs"))
        roots = list(_tensors(roots_arg))
        keys: list[NodeKey | None] = []
        for root in roots:
            fn = _grad_fn(root)
            keys.append(None if fn is None else (fn.name(), fn._sequence_nr()))
        position = 3 if kind == _AUTOGRAD_GRAD else 2  # retain_graph's place in args
        retain = kwargs.get("retain_graph", args[position] if len(args) > position else None)
        create = bool(
            kwargs.get("create_graph", args[position + 1] if len(args) > position + 1 else False)
        )
        if retain is None:
            retain = create
        if kind == _BACKWARD:  # which leaves it fills; the others are left out on purpose
            position = 4 if func is torch.Tensor.backward else 5
            args, kwargs, inputs = asked_inputs(args, kwargs, position)
            self.events.last_inputs = None if inputs is None else frozenset(map(id, inputs))
        for root in roots:
            if (
                root.requires_grad
                and _grad_fn(root) is None
                and not isinstance(root, torch.nn.Parameter)
            ):  # backward on a leaf: nothing behind it to reach
                self.events.leaf_backwards.append(
                    (next(self.order), line, self.made_leaves.get(root))
                )
        event = Backward(next(self.order), line, _names(func), keys, bool(retain))
        self.events.backwards.append(event)
        hook = self.backward_hook
        if hook is not None:
            hook(event, roots, args, kwargs)
        plain = kind == _BACKWARD and not self.in_optimizer
        if plain:
            with contextlib.suppress(Exception):
                self.stale.before_backward()
        try:
            result = func(*args, **kwargs)
        except BaseException as error:
            event.error = error
            try:
                if hook is not None:
                    hook(event, roots, args, kwargs)
            finally:
                event.error = frameless(error)
            raise
        if plain:
            with contextlib.suppress(Exception):
                self.stale.after_backward(line)
        events = self.events
        if kind == _BACKWARD and not create and not _from_torch_driver(sys._getframe(1)):
            # autograd.grad and higher-order steps (Hessians, Newton steps, penalties, MAML)
            # build on their graphs on purpose, and autograd.functional/gradcheck/torch.func
            # run their own passes: only a plain backward() ends a graph's use.
            events.last_backward = next(self.order)
            with contextlib.suppress(Exception):  # never break the user's program
                _window.step_done(self)  # drop what no analysis needs of older steps
        if kind == _BACKWARD:  # autograd.grad returns gradients; it fills no .grad
            events.grads_pending = True
        if not event.retain_graph:
            events.saved_storages.clear()
            events.suspicious = False
        if kind == _AUTOGRAD_GRAD and not event.retain_graph and result is not None:
            # Gradients from autograd.grad without create_graph=True are constants.
            created = kwargs.get("create_graph", args[4] if len(args) > 4 else False)
            if not created:
                cut = self._cut(func, "autograd_grad", line)
                for grad in _tensors(result):
                    self.taint.set(grad, frozenset((cut,)))
        if self.check_nan:
            self._check_grads()
        return result

    def _check_grads(self) -> None:
        events = self.events
        if events.nan_grads:
            return
        for leaf in self.leaves.tensors():
            grad = leaf.grad
            if grad is None or not grad.is_floating_point() or grad.device.type != "cpu":
                continue
            if _checkable(grad) and not _finite(grad):
                events.nan_grads.append(
                    (id(leaf), _describe(leaf), tuple(leaf.shape), bool(torch.isnan(grad).any()))
                )
                return


class _TensorMap(Generic[_V]):
    """``id(tensor) -> value`` for live tensors only. WeakKeyDictionary cannot hold tensors:
    comparing two weak references compares the tensors with ``==``, elementwise."""

    __slots__ = ("entries",)

    def __init__(self) -> None:
        self.entries: dict[int, tuple[weakref.ref[torch.Tensor], _V]] = {}

    def __bool__(self) -> bool:
        return bool(self.entries)

    def set(self, tensor: torch.Tensor, value: _V) -> None:
        key = id(tensor)
        entries = self.entries

        def forget(_: object, key: int = key) -> None:
            entries.pop(key, None)

        try:
            self.entries[key] = (weakref.ref(tensor, forget), value)
        except TypeError:
            return

    def get(self, tensor: torch.Tensor, default: _V | None = None) -> _V | None:
        entry = self.entries.get(id(tensor))
        if entry is None or entry[0]() is not tensor:
            return default
        return entry[1]

    def tensors(self) -> list[torch.Tensor]:
        alive = [ref() for ref, _ in list(self.entries.values())]
        return [t for t in alive if t is not None]

    def clear(self) -> None:
        self.entries.clear()


# warnings re-issued per user code object: (text, category, line)
_REISSUED: weakref.WeakKeyDictionary[Any, set[tuple[str, type[Warning], int]]] = (
    weakref.WeakKeyDictionary()
)


def _warn_from_user(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Call ``func``, re-issuing its warnings at the user's line: a warning raised from C++
    is attributed to the running Python frame, which would be this recorder's, not the
    user's (``.grad`` of a non-leaf warns every time)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = func(*args, **kwargs)
    frame: FrameType | None = sys._getframe(2)
    while frame is not None and not is_user_file(frame.f_code.co_filename):
        frame = frame.f_back
    shown = _REISSUED.setdefault(frame.f_code, set()) if frame is not None else set()
    for warning in caught:
        key = (str(warning.message), warning.category, frame.f_lineno if frame else 0)
        if key in shown and not _always(warning, frame):
            continue  # catch_warnings resets the registry: keep Python's once per line
        shown.add(key)
        if frame is None:
            warnings.warn_explicit(
                warning.message, warning.category, warning.filename, warning.lineno
            )
        else:
            warnings.warn_explicit(
                warning.message,
                warning.category,
                frame.f_code.co_filename,
                frame.f_lineno,
                module=frame.f_globals.get("__name__"),
                registry=frame.f_globals.setdefault("__warningregistry__", {}),
            )
    return result


def _always(warning: warnings.WarningMessage, frame: FrameType | None) -> bool:
    """Whether the warning filters say "always" for this warning at the user's line."""
    text = str(warning.message)
    module = frame.f_globals.get("__name__", "") if frame is not None else ""
    lineno = frame.f_lineno if frame is not None else 0
    for action, message, category, module_re, line in warnings.filters:
        if (
            (message is None or message.match(text))
            and issubclass(warning.category, category)
            and (module_re is None or module_re.match(module))
            and line in (0, lineno)
        ):
            return bool(action == "always")
    return bool(warnings.defaultaction == "always")  # type: ignore[attr-defined]


def _reparam_below(node: Any, reparams: dict[int, Reparam], limit: int = 64) -> Reparam | None:
    """The reparametrised parameter a few nodes below ``node``, if any."""
    queue, seen = deque([node]), {id(node)}
    while queue and len(seen) < limit:
        current = queue.popleft()
        variable = getattr(current, "variable", None)
        if variable is not None and id(variable) in reparams:
            return reparams[id(variable)]
        for child, _ in current.next_functions:
            if child is not None and id(child) not in seen:
                seen.add(id(child))
                queue.append(child)
    return None


def _running_module() -> tuple[str, str] | None:
    """The innermost nn.Module whose method is on the call stack, as (its name in the
    outermost one, its class): ``("1.lin", "Linear")``. Found once, when a NaN turns up,
    so no module hook is needed for it."""
    running: list[torch.nn.Module] = []
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        owner = frame.f_locals.get("self") if frame.f_code.co_varnames[:1] == ("self",) else None
        if (
            isinstance(owner, torch.nn.Module)
            and not _is_ours(frame.f_code)
            and (not running or running[-1] is not owner)
        ):
            running.append(owner)
        frame = frame.f_back
    if not running:
        return None
    inner, outer = running[0], running[-1]
    kind = type(inner).__name__
    for name, module in outer.named_modules():
        if module is inner:
            return name, kind
    return "", kind


_is_wrapped = getattr(torch._C._functorch, "is_functorch_wrapped_tensor", lambda _: False)


def _checkable(tensor: torch.Tensor) -> bool:
    """Whether a value check is possible without changing what the user's code does: not
    inside vmap/jacfwd (no .item() there), a jit trace or a dynamo compile (the check
    would be traced), and not on a lazy module's uninitialized parameter."""
    return not (
        _is_wrapped(tensor)
        or torch.nn.parameter.is_lazy(tensor)
        or torch._C._is_tracing()
        or torch.compiler.is_compiling()
        or type(tensor) not in _PLAIN_TENSORS
    )


_PLAIN_TENSORS = (torch.Tensor, torch.nn.Parameter)


def _finite(tensor: torch.Tensor) -> bool:
    """No NaN or infinity in ``tensor``: one reduction, and an exact check only when the sum
    is not finite (NaN and infinities propagate through a sum; a finite sum can overflow)."""
    tensor = tensor.detach()  # isfinite would otherwise build an AbsBackward0 node
    if math.isfinite(float(tensor.sum())):
        return True
    return bool(torch.isfinite(tensor).all())


def _describe(tensor: torch.Tensor) -> str:
    kind = "parameter" if isinstance(tensor, torch.nn.Parameter) else "tensor"
    return f"{kind} of shape {tuple(tensor.shape)}"


def _current_sequence() -> int:
    """The sequence number the next autograd node made in this thread will get."""
    with torch.enable_grad():
        probe = torch.zeros((), requires_grad=True).mul(1)
    assert probe.grad_fn is not None
    return int(probe.grad_fn._sequence_nr()) + 1


_returns: dict[CodeType, SourceLine | None] = {}


def _cloned_parameter(data: Any) -> torch.nn.Parameter | None:
    """The parameter ``data`` is a ``.clone()`` of (``nn.Parameter(p.clone())``), or None."""
    node = _grad_fn(data) if isinstance(data, torch.Tensor) else None
    if node is None or type(node).__name__ != "CloneBackward0":
        return None
    (source, _), *_ = node.next_functions or ((None, 0),)
    variable = getattr(source, "variable", None)
    return variable if isinstance(variable, torch.nn.Parameter) else None


def _defaults_training(line: SourceLine, name: str) -> bool:
    """Whether the ``name(...)`` call on ``line`` leaves ``training`` at its default: no
    ``training=`` keyword and no third positional argument (``F.dropout(x, p, training)``)."""
    import ast
    import linecache

    try:
        tree = ast.parse(linecache.getline(line[0], line[1]).strip())
    except SyntaxError:
        return False
    calls = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and (getattr(node.func, "attr", None) or getattr(node.func, "id", None)) == name
    ]
    return bool(calls) and all(
        len(call.args) < 3
        and not any(k.arg in ("training", None) for k in call.keywords)  # None: **kwargs
        for call in calls
    )


def _note_mode(mode: RecorderMode, module: torch.nn.Module, on: Any, frame: Any) -> None:
    """Note an eval() the user called on ``module`` itself; forget it at their train()."""
    # Step out of this module's own eval()/train() (an override calling super().train()).
    while (
        frame is not None
        and frame.f_code.co_name in ("train", "eval")
        and frame.f_locals.get("self") is module
    ):
        frame = frame.f_back
    if frame is None or not is_user_file(frame.f_code.co_filename):
        return  # passed down by a parent's train(): not asked for this module by name
    if on:
        mode.evals.pop(id(module), None)
        if len(mode.train_lines) < _MAX_EVENTS:
            mode.train_lines[id(module)] = _user_line(frame)
    elif id(module) not in mode.evals and len(mode.evals) < _MAX_EVENTS:
        mode.evals[id(module)] = (weakref.ref(module), _user_line(frame), mode.events.steps)


def _stepped_evals(mode: RecorderMode, stepped: set[int]) -> None:
    """At an optimizer step: eval()'d modules whose parameters it updates with gradients
    (GP111), and those of them still in eval mode after training in train mode (GP131)."""
    events = mode.events
    for ident, (ref, line, steps_before) in list(mode.evals.items()):
        module = ref()
        if module is None:
            del mode.evals[ident]
            continue
        if ident in events.eval_trained and (
            ident in events.eval_mode_steps or module.training or not steps_before
        ):
            continue
        if any(id(p) in stepped for p in module.parameters()):
            events.eval_trained.setdefault(ident, line)
            if not module.training and steps_before:
                events.eval_mode_steps[ident] = (line, mode.train_lines.get(ident))


def _unknown_or_nonzero(grad: torch.Tensor) -> bool:
    """Off the CPU (reading it would sync) or under a transform: unknown, so True."""
    return grad.device.type != "cpu" or not _checkable(grad) or bool(grad.any())


def _all_ones(grad: torch.Tensor) -> bool:
    return grad.device.type == "cpu" and _checkable(grad) and bool((grad == 1).all())


def _writes_watched(hook: Any, name: str, events: Events) -> Any:
    """``hook`` wrapped to notice it writing to the gradient it is given (GP309): the
    gradient's version moves, or the write fails on an expanded gradient."""
    from gradprobe._patch import WRAPPED_ATTR

    def watched(grad: Any) -> Any:
        version = _version(grad) if isinstance(grad, torch.Tensor) else None
        try:
            result = hook(grad)
        except RuntimeError as error:
            if _OVERLAP in str(error):
                _note_hook_write(events, name, hook, error.__traceback__)
            raise
        if version is not None and _version(grad) != version:
            _note_hook_write(events, name, hook, None)
        return result

    with contextlib.suppress(AttributeError, TypeError):
        functools.update_wrapper(watched, hook)
    setattr(watched, WRAPPED_ATTR, hook)
    setattr(watched, _WATCHED, True)
    return watched


_WATCHED = "__gradprobe_watched__"


_OVERLAP = OVERLAPPING_WRITE_ERROR


def _note_hook_write(events: Events, name: str, hook: Any, tb: Any) -> None:
    if name in events.hook_writes or len(events.hook_writes) >= 10:
        return
    line: SourceLine | None = None
    failed = tb is not None
    code = getattr(hook, "__code__", None)
    while tb is not None:  # the failing line inside the hook
        if tb.tb_frame.f_code is code:
            line = (code.co_filename, tb.tb_lineno, code.co_name)
        tb = tb.tb_next
    events.hook_writes[name] = (line or _inplace_line(hook), failed)


def _inplace_line(function: Any) -> SourceLine | None:
    """The first line of ``function`` that writes to its first argument in place
    (``grad.mul_(k)``, ``grad *= k``, ``grad[i] = v``); else its return line."""
    code = getattr(function, "__code__", None)
    if not isinstance(code, CodeType) or code.co_argcount < 1:
        return _return_line(function)
    import ast
    import inspect

    argument = code.co_varnames[0]
    try:
        lines, start = inspect.getsourcelines(code)
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except (OSError, TypeError, SyntaxError):
        return _return_line(function)
    hits: list[int] = []
    for node in ast.walk(tree):
        target: ast.AST | None = None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            attr = node.func.attr
            if attr.endswith("_") and not attr.endswith("__"):
                target = node.func.value
        elif isinstance(node, ast.AugAssign):
            target = node.target
        elif isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Subscript):
            target = node.targets[0].value
        if isinstance(target, ast.Name) and target.id == argument:
            hits.append(getattr(node, "lineno", 1))
    if not hits:
        return _return_line(function)
    return (code.co_filename, start + min(hits) - 1, code.co_name)


def _return_line(function: Any) -> SourceLine | None:
    """Where ``function`` returns a value, when it does so at one place; else its def line."""
    code = getattr(function, "__code__", None)
    if not isinstance(code, CodeType):
        return None
    if code not in _returns:
        import ast
        import inspect

        line = code.co_firstlineno
        try:
            lines, start = inspect.getsourcelines(code)
            tree = ast.parse(textwrap.dedent("".join(lines)))
            found = [
                node.lineno
                for node in ast.walk(tree)
                if isinstance(node, ast.Return) and node.value is not None
            ]
            if len(found) == 1:
                line = start + found[0] - 1
        except (OSError, TypeError, SyntaxError):
            pass
        _returns[code] = (code.co_filename, line, code.co_name)
    return _returns[code]


def _leaves_below(
    tensor: torch.Tensor, limit: int = 100_000, *, parameters: bool = False
) -> list[int]:
    """ids of the leaf tensors (AccumulateGrad variables) the graph of ``tensor`` reaches;
    only the ``nn.Parameter`` ones with ``parameters``."""
    if _grad_fn(tensor) is None:
        return []
    graph = _trace(tensor, max_nodes=limit)  # wraps and protects the nodes walked below
    kind = torch.nn.Parameter if parameters else torch.Tensor
    return [
        id(node.variable)
        for node in live_nodes([tensor], len(graph.nodes))
        if isinstance(getattr(node, "variable", None), kind)
    ]
