"""What a recording keeps: the recorder's data model, as plain data (no tensors, no nodes).

Autograd nodes cannot be weakly referenced; they are keyed by ``(name, sequence_nr)``
(:data:`NodeKey`), the key :class:`~gradprobe.graph.Node` also carries, so a traced graph
can be joined with what was recorded. Lines are ``(co_filename, line, function)``
(:data:`SourceLine`). This module imports no other part of the recorder.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from gradprobe import _window

__all__ = [
    "Backward",
    "CtxWrite",
    "Cut",
    "Events",
    "GradRead",
    "Mix",
    "NodeKey",
    "NodeRecord",
    "NonFinite",
    "Recomputation",
    "Reparam",
    "Replaced",
    "SourceLine",
    "Stack",
    "SwitchSet",
    "Write",
]

NodeKey = tuple[str, int]
SourceLine = tuple[str, int, str]  # (co_filename, line, function)

# what one recording keeps at most
_MAX_NODES = 500_000
_MAX_EVENTS = 100_000
_MAX_PROTOCOL = 20_000
_MAX_FROZEN = 64  # frozen parameters followed through one optimizer step
_LEAF_CUTS = 8  # cuts remembered per leaf
_MAX_WALK = 20_000  # graph nodes walked to compare the parameters two operands reach


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
    node: NodeKey | None = None  # the node of the combined value


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
    born: bool = False  # every input was finite: the non-finite value was made here
    deliberate: bool = False  # a non-finite constant written on purpose (a -inf mask)
    plain: bool = False  # a non-finite input did not require grad (data, a no_grad result)


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


@dataclass(frozen=True, slots=True)
class StepEvent:
    """One event of the training-step protocol, in the order the user's code made them.

    ==================  ======================================================================
    kind                what happened (``line``: the user's line; other fields as noted)
    ==================  ======================================================================
    ``backward``        a ``backward()`` filled ``.grad``
    ``grads``           ``.grad`` assigned by hand (per-sample DP-SGD, ``torch.func``)
    ``grad_returned``   ``torch.autograd.grad`` returned gradients (``.grad`` untouched)
    ``read``            the user's code read a filled ``.grad`` (once per run of reads)
    ``zero``            a filled ``.grad`` set to ``None`` outside a step (``zero_grad()``,
                        ``p.grad = None``)
    ``scale``           a ``GradScaler`` scaled a loss; ``unscale``: it unscaled gradients
    ``clip``            a gradient clipping; ``grads``/``given``: tensors with a gradient /
                        all tensors it was given
    ``step``            an optimizer step; ``optimizer``: its id, ``grads``: parameters
                        with a gradient, ``closure``: ``step(closure)``, ``sums``: for
                        each parameter followed, the orders of the ``backward`` events
                        summed in the gradient it applies (since that gradient's reset)
    ``closure``         the optimizer called that closure (it used the gradients so far)
    ``stale``           a hand-written update (``p -= lr * p.grad``, which has no ``step``
                        event) at ``line`` used gradients a backward at ``origin`` had
                        added onto ones an earlier update used, untouched since
    ``moved``           the step just before changed frozen parameters (``params``, ids)
                        through the zero ``.grad`` they kept; ``origin``: the freeze
    ==================  ======================================================================
    """

    order: int
    kind: str
    line: SourceLine | None
    optimizer: int = 0
    grads: int = 0
    given: int = 0
    closure: bool = False
    origin: SourceLine | None = None
    params: tuple[int, ...] = ()
    sums: tuple[tuple[int, ...], ...] = ()


@dataclass(frozen=True, slots=True)
class CustomFunction:
    """A custom ``autograd.Function`` applied while recording: where its backward is, and
    how it was first applied (for errors its backward raises or returns)."""

    name: str  # the class name; its node is "<name>Backward"
    backward: SourceLine | None  # the backward's def line (file, line, "backward")
    applied: SourceLine | None  # the first user line that applied it
    autocast: bool  # applied with autocast on
    custom_bwd: bool  # its backward is wrapped by torch.amp.custom_bwd (autocast restored)


# -- the smaller records, as named tuples: typed, and still unpacked by position -----------


class Typo(NamedTuple):
    """``p.require_grad = False``: an attribute set on a tensor under a misspelt name."""

    line: SourceLine | None
    name: str  # what was set
    meant: str  # the attribute it was probably meant to be
    storage: int = 0  # the tensor's storage address (0: unknown)


class CopyFreeze(NamedTuple):
    """``requires_grad = False`` set on a tensor that is not a Parameter (a copy)."""

    line: SourceLine | None
    storage: int


class EmptyLoad(NamedTuple):
    """A ``load_state_dict(strict=False)`` that matched nothing."""

    line: SourceLine | None
    unexpected: list[str]
    missing: list[str]


@dataclass(slots=True)
class Schedule:
    """A learning-rate scheduler built while recording, and the user's calls to its step()."""

    name: str  # its class
    made: SourceLine | None  # where it was built
    optimizer: int  # id of the optimizer it drives
    steps: int = 0  # the user's step() calls (not the one its constructor makes)
    line: SourceLine | None = None  # the latest of them


class OptimizerMade(NamedTuple):
    """When and where an optimizer was built."""

    order: int
    line: SourceLine | None


class NanGrad(NamedTuple):
    """A gradient with NaN/Inf that backward() left on a leaf."""

    ident: int  # id of the leaf
    described: str  # what the leaf is ("parameter fc.weight")
    shape: tuple[int, ...]
    nan: bool


class LeafBackward(NamedTuple):
    """``backward()`` called on a leaf that requires grad."""

    order: int
    line: SourceLine | None  # the backward
    made: SourceLine | None  # where the leaf was made
    # the no_grad block its values came through, and where requires_grad was switched on
    origin: tuple[SourceLine | None, SourceLine | None]
    grad_on: bool = True  # the grad mode when backward() was called
    # the cuts its values came from (the taint of the leaf: a detach, a numpy round trip,
    # torch.tensor of a list of losses), by id in ``Events.cuts``
    cuts: frozenset[int] = frozenset()
    # backward() was called on a tensor computed from that leaf, whose small graph reaches
    # no nn.Parameter: the lines of the nodes on the way (empty: called on the leaf itself)
    through: frozenset[SourceLine] = frozenset()
    ident: int = 0  # id() of the leaf: one an optimizer steps is trained on purpose


class GradTarget(NamedTuple):
    """A loss given a target that requires grad."""

    line: SourceLine | None  # the loss
    origin: SourceLine | None  # where the target came from
    op: str


class WeightedLogProb(NamedTuple):
    """A log-probability multiplied by a weight that requires grad through parameters the
    log-probability does not reach (an advantage not detached)."""

    line: SourceLine | None  # the product
    made: SourceLine | None  # the weight's line
    origin: SourceLine | None  # where the weight's graph comes from
    parameters: int  # parameters only the weight reaches


class NoneGrads(NamedTuple):
    """A custom Function's backward returned None for inputs that need a gradient."""

    function: str
    positions: list[int]
    line: SourceLine | None  # the backward's return line


class BlindBackward(NamedTuple):
    """A custom Function's backward that never reads its grad_output yet returned
    gradients."""

    function: str
    line: SourceLine | None  # the backward's return line
    node: NodeKey
    ones: bool  # every gradient that arrived was exactly one: right by luck


class NonLeafFlag(NamedTuple):
    """``requires_grad`` set on a tensor computed by an op, which torch refused."""

    line: SourceLine | None  # the line that set it
    made: SourceLine | None  # the line that computed the tensor


class EvalGraphs(NamedTuple):
    """A top-level model called in eval mode with gradients on, for one calling line."""

    calls: int
    eval_line: SourceLine | None
    outputs: tuple[NodeKey, ...]  # the output nodes of the first calls


class ParamHook(NamedTuple):
    """A post-accumulate-grad hook that uses its argument (the parameter) as the
    gradient."""

    misuse: SourceLine | None
    registered: SourceLine | None


class BrokenTie(NamedTuple):
    """A Parameter replaced on a module while another module kept the old one."""

    line: SourceLine | None
    attribute: str
    other: str  # the other module's type
    other_attribute: str
    kind: str  # this module's type


class OpLine(NamedTuple):
    """A torch op at a user's line (a discarded result, a zero-derivative op)."""

    line: SourceLine | None
    op: str


class HookWrite(NamedTuple):
    """A tensor hook that wrote in place to the gradient it was given."""

    line: SourceLine | None
    failed: bool


class NoneGradRead(NamedTuple):
    """A ``.grad`` read on a leaf that requires grad which returned None."""

    calls: int  # backward calls before the read
    described: str  # what the tensor is
    made: SourceLine | None
    cut: int | None  # its last cut


class LateLeaf(NamedTuple):
    """A leaf whose requires_grad was turned on after the graph a backward used was
    built."""

    turned: SourceLine | None  # the requires_grad line
    read: SourceLine | None  # the .grad read
    backward: SourceLine | None
    built: SourceLine | None  # the graph's first line


Stack = tuple[SourceLine, ...]  # the user's frames of a call, outermost first


class EvalModeStep(NamedTuple):
    """A module stepped while still in eval mode after it had trained in train mode."""

    eval_line: SourceLine | None
    train_line: SourceLine | None  # the user's last train() before it
    eval_stack: Stack = ()  # the user's frames of that eval() call
    step_stack: Stack = ()  # and of the step that found the module in eval mode


class SwitchSet(NamedTuple):
    """A process-wide switch set by a plain call, which nothing undoes for the caller (a
    ``with`` block or a decorator would): ``torch.set_grad_enabled(False)`` as a statement,
    ``torch.set_default_dtype(...)``."""

    value: str  # what it was set to: "False", "torch.bfloat16"
    stack: Stack  # the user's frames of the call
    call: str = ""  # how, when not the plain call: "torch.no_grad().__enter__()"


class Recomputation(NamedTuple):
    """A module run again while a backward ran (a checkpoint rebuilding its activations)
    that changed state: buffers it updated, random numbers it drew."""

    backward: SourceLine | None  # the user's backward() call that ran it
    module: str  # the class of the outermost module run again
    rerun: Stack  # the user's frames inside that backward down to the module call
    checkpoint: SourceLine | None  # the user's torch.utils.checkpoint call around it
    torch_checkpoint: bool  # run again by torch.utils.checkpoint (else by user code)
    buffers: tuple[str, ...]  # its buffers whose version the rerun moved
    drew: bool  # the rerun advanced the default generator
    # it drew from the generator's running stream (where the backward found it), not from a
    # state restored for it (the forward's, as checkpoint's preserve_rng_state does)
    live: bool


class ParameterCopy(NamedTuple):
    """``nn.Parameter(p.clone())`` of another parameter ``p``."""

    line: SourceLine | None
    source: int  # id(p)
    copy: int  # id of the new parameter


class InferenceOrigin(NamedTuple):
    """Where a tensor made inside an ``inference_mode`` block came from."""

    made: SourceLine | None  # the op that made it
    block: SourceLine | None  # the block's ``with`` (or decorator) line


class InferenceUse(NamedTuple):
    """An op that refused an inference tensor."""

    line: SourceLine | None
    cuts: tuple[int, ...]  # cuts that made the tensor
    origin: InferenceOrigin | None = None  # where it was made, when made while recording


class StackedHook(NamedTuple):
    """Hooks one line registered again and again on one leaf tensor (a parameter), all of
    them still attached: each forward adds one more, and every one of them runs."""

    line: SourceLine | None  # the register_hook call
    hook: str  # the hook's __name__
    tensor: int  # id of the leaf
    attached: int  # the most attached at once from that line


class Replaced(NamedTuple):
    """A submodule or Parameter assigned over one a module already had (``model.fc =
    nn.Linear(...)``, ``q.scale = nn.Parameter(...)``)."""

    order: int
    name: str  # the attribute
    kind: str  # "module" or "parameter"
    new: int  # id of what was assigned
    old: tuple[int, ...]  # ids of the parameters it replaced
    same_shapes: bool  # the new parameters have the old ones' shapes
    stack: tuple[SourceLine, ...]  # the user's lines calling the assignment, innermost first


class TensorHook(NamedTuple):
    """A ``Tensor.register_hook`` call, by the hook's ``__name__``."""

    registered: SourceLine | None
    returns: SourceLine | None  # the line the hook returns its gradient from, or its def
    node: NodeKey | None = None  # the grad_fn of the tensor it was registered on


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
    # the first non-finite value computed from finite inputs (not a constant written in)
    first_born: NonFinite | None = None
    # the first non-finite value born among tensors that do not require grad
    first_plain: NonFinite | None = None
    backwards: list[Backward] = field(default_factory=list)
    typos: list[Typo] = field(default_factory=list)
    parameter_lines: dict[int, SourceLine | None] = field(default_factory=dict)
    module_lines: dict[int, SourceLine | None] = field(default_factory=dict)  # id(module) ->
    module_orders: dict[int, int] = field(default_factory=dict)  # id(module) -> when made
    # id(module) -> the user's line that called its constructor, outside the module's own
    # __init__ chain (``model = Net()``, not the ``super().__init__()`` inside Net)
    module_sites: dict[int, SourceLine | None] = field(default_factory=dict)
    # layers with parameters built inside a running forward and called there:
    # their line -> (how many, the layer's class, the outer model's class) (GP116)
    forward_layers: dict[SourceLine | None, tuple[int, str, str]] = field(default_factory=dict)
    # loss modules built with reduction='none' while recording: (class name, line), for a
    # non-scalar backward of their result (GP105)
    unreduced_losses: list[tuple[str, SourceLine | None]] = field(default_factory=list)
    # requires_grad = False set on a tensor that is not a Parameter: (line, storage address)
    copy_freezes: list[CopyFreeze] = field(default_factory=list)
    # load_state_dict(strict=False) calls that matched nothing: (line, unexpected, missing)
    empty_loads: list[EmptyLoad] = field(default_factory=list)
    # id(optimizer) -> (when made, where)
    optimizer_lines: dict[int, OptimizerMade] = field(default_factory=dict)
    # learning-rate schedulers built while recording: id(scheduler) -> what it is (GP166)
    schedules: dict[int, Schedule] = field(default_factory=dict)
    rewrapped: dict[int, Cut] = field(default_factory=dict)  # id(leaf param) -> cut
    saved_storages: set[int] = field(default_factory=set)
    suspicious: bool = False
    nan_grads: list[NanGrad] = field(default_factory=list)
    last_backward: int = -1  # order of the last backward that completed
    # what has been dropped of old steps in a long recording (gradprobe._window)
    window: _window.Window = field(default_factory=lambda: _window.Window())
    # line -> the backwards (orders) whose graphs it chained onto
    kept_alive: dict[SourceLine, set[int]] = field(default_factory=dict)
    reparams: dict[int, Reparam] = field(default_factory=dict)  # id(parameter) ->
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
    # backward() on a leaf that requires grad: (order, backward line, where it was made,
    # (the no_grad block its values came through, where requires_grad was switched on))
    leaf_backwards: list[LeafBackward] = field(default_factory=list)
    # losses given a target that requires grad: (loss line, where the target came from, op)
    grad_targets: list[GradTarget] = field(default_factory=list)
    # log-probabilities multiplied by a weight that requires grad through parameters the
    # log-probability does not reach: (product line, the weight's line, where the weight's
    # graph comes from, how many parameters only the weight reaches)
    weighted_log_probs: list[WeightedLogProb] = field(default_factory=list)
    # custom Functions whose backward returned None for inputs that need a gradient:
    # (Function name, input positions, the backward's return line)
    none_grads: list[NoneGrads] = field(default_factory=list)
    # custom Functions whose backward never reads its grad_output yet returned gradients:
    # (Function name, the backward's return line, its node, whether every gradient that
    # arrived was exactly one, which makes its results right by luck)
    blind_backwards: list[BlindBackward] = field(default_factory=list)
    # requires_grad set on a tensor computed by an op, which torch refused: (the line that
    # set it, the line that computed the tensor)
    nonleaf_flags: list[NonLeafFlag] = field(default_factory=list)
    # the training-step protocol, latest last (bounded: the protocol check reads what is
    # new after every optimizer step, and the rest when the run ends)
    protocol: deque[StepEvent] = field(default_factory=lambda: deque(maxlen=_MAX_PROTOCOL))
    # a top-level model called in eval mode with gradients on, by the calling line:
    # (calls, the eval() line, the output nodes of the first calls)
    eval_graphs: dict[SourceLine | None, EvalGraphs] = field(default_factory=dict)
    # post-accumulate-grad hooks that use their argument (the parameter) as the gradient:
    # (where the hook does, where it was registered)
    param_hooks: list[ParamHook] = field(default_factory=list)
    # a Parameter replaced on a module while another module kept the old one (a broken
    # tie): (line, attribute, the other module's type, its attribute, this module's type)
    broken_ties: list[BrokenTie] = field(default_factory=list)
    # results of pure tensor ops thrown away by an expression statement: (line, op)
    discarded: list[OpLine] = field(default_factory=list)
    # custom Functions applied, by class name
    custom_functions: dict[str, CustomFunction] = field(default_factory=dict)
    # tensors kept on a custom Function's ctx and written in place before its backward ran
    ctx_writes: list[CtxWrite] = field(default_factory=list)
    # modules the user switched to eval() whose parameters an optimizer later stepped with
    # gradients: id(module) -> the eval() line (GP111 when eval() changed nothing)
    eval_trained: dict[int, SourceLine | None] = field(default_factory=dict)
    # tensor hooks that wrote in place to the gradient they were given: hook name ->
    # (the line, whether the write failed) (GP309)
    hook_writes: dict[str, HookWrite] = field(default_factory=dict)
    # .grad reads on leaves that require grad which returned None: line -> (backward calls
    # before the read, what the tensor is, where it was made, its last cut) (GP137)
    none_grad_reads: dict[SourceLine, NoneGradRead] = field(default_factory=dict)
    # leaves whose requires_grad was turned on after the graph a backward used was built,
    # read as .grad None (GP136): (requires_grad line, .grad line, backward line, graph line)
    late_leaves: list[LateLeaf] = field(default_factory=list)
    # functional dropouts left at training=True that ran in a module in eval mode:
    # line -> the module's class (GP132)
    eval_dropouts: dict[SourceLine, str] = field(default_factory=dict)
    # modules stepped while still in eval mode after having trained in train mode:
    # id(module) -> (the eval() line, the user's last train() line before it) (GP131)
    eval_mode_steps: dict[int, EvalModeStep] = field(default_factory=dict)
    # the latest plain call that set each process-wide switch: "grad" (set_grad_enabled),
    # "default_dtype" -> what it set and the user's frames of the call
    switches: dict[str, SwitchSet] = field(default_factory=dict)
    # modules run again during a backward that updated buffers or drew random numbers
    recomputations: list[Recomputation] = field(default_factory=list)
    # nn.Parameter(p.clone()) of another parameter p: (line, id(p), id(new parameter))
    parameter_copies: list[ParameterCopy] = field(default_factory=list)
    # ops that refused an inference tensor: (line, cuts that made the tensor)
    inference_uses: list[InferenceUse] = field(default_factory=list)
    # Tensor.register_hook calls by the hook's __name__: (register line, the line the hook
    # returns its new gradient from, or its def line)
    tensor_hooks: dict[str, TensorHook] = field(default_factory=dict)
    # custom Function nodes (torch's checkpoint too) -> the user's line that called .apply
    # (a node is otherwise recorded where an op first used it)
    applied: dict[NodeKey, SourceLine] = field(default_factory=dict)
    # module.half() / .bfloat16() / .to(float16) calls that left parameters in 16 bits
    low_precision: list[SourceLine | None] = field(default_factory=list)
    # leaves given the same hook by one line again and again, still attached: line -> (GP310)
    stacked_hooks: dict[SourceLine | None, StackedHook] = field(default_factory=dict)
    # modules with parameters of their own, by id -> the nodes of the tensors their first
    # call with grad enabled was given: what their parameters are applied to
    module_inputs: dict[int, tuple[NodeKey, ...]] = field(default_factory=dict)
    # a leaf's filled .grad read by the user's code: id(leaf) -> the order of the last
    # backward that had completed when it was first read
    leaf_grad_reads: dict[int, int] = field(default_factory=dict)
    # submodules and Parameters assigned over ones their module had, in order
    replaced: list[Replaced] = field(default_factory=list)
