"""The recorder's :class:`~torch.overrides.TorchFunctionMode`: what runs at every torch call.

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

The hot path (``__torch_function__`` and the pieces it calls for most ops) is here; what
it calls for new nodes (:mod:`~gradprobe._recorder.graph`), for particular functions
(:mod:`~gradprobe._recorder.flows`) and for backward calls
(:mod:`~gradprobe._recorder.backward`) is in mixins of :class:`RecorderMode`.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import sys
import weakref
from collections.abc import Callable, Iterable
from types import FrameType
from typing import TYPE_CHECKING, Any

import torch
from torch.overrides import TorchFunctionMode

from gradprobe._recorder.backward import _BackwardNotes
from gradprobe._recorder.calls import (
    _AUTOGRAD_GRAD,
    _BACKWARD,
    _DROPOUT,
    _GRAD_READ,
    _INPLACE,
    _PRIVATE,
    _REQUIRES,
    _SCALAR,
    _SETITEM,
    _is_data_get,
    _kind,
    _kind_of_value,
    _names,
)
from gradprobe._recorder.events import (
    _LEAF_CUTS,
    _MAX_EVENTS,
    Backward,
    Cut,
    Events,
    GradRead,
    InferenceOrigin,
    Mix,
    NodeKey,
    NonFinite,
    OpLine,
    SourceLine,
    Stack,
    StepEvent,
    SwitchSet,
    Write,
)
from gradprobe._recorder.flows import _FlowNotes
from gradprobe._recorder.frames import (
    _PASSING_ON,
    _from_torch_driver,
    _is_ours,
    _running_module,
    _user_line,
    _warn_from_user,
    call_from,
    passes_calls_on,
    plain_caller,
)
from gradprobe._recorder.graph import _GraphNotes
from gradprobe._recorder.lines import _just_after, _result_discarded
from gradprobe._recorder.ops import (
    _ADDITIVE,
    _INFERENCE_SAVED,
    _KEEP_SAMPLE,
    _LOG_PROB_START,
    _LOSS_TARGETS,
    _PURE_RESULT,
    _SILENT_WRITES,
    _WARNS_AT_CALLER,
)
from gradprobe._recorder.recompute import Reruns
from gradprobe._recorder.stalegrad import StaleGrads

_ACCUMULATE_GRAD = torch._C._functions.AccumulateGrad  # type: ignore[attr-defined]
from gradprobe._recorder.tensors import (
    _checkable,
    _current_sequence,
    _finite,
    _grad_fn,
    _reparam_below,
    _storage,
    _TensorMap,
    _tensors,
    _version,
)
from gradprobe._source import is_user_file
from gradprobe._threads import backward_ended, backward_started
from gradprobe.errors import error_text

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = ["RecorderMode"]

_DETACH_INPLACE = torch.Tensor.detach_


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


class RecorderMode(_GraphNotes, _FlowNotes, _BackwardNotes, TorchFunctionMode):
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
        self.zeroing = 0  # inside optimizer.zero_grad()
        self.zero_place = (0, -1)  # (id(frame), instruction) of the latest "zero" event
        # log-probabilities: True once they are of chosen actions (Distribution.log_prob of
        # a sample, or log_softmax entries picked by index), False for a full log_softmax
        self.log_probs = _TensorMap[bool]()
        self.samples = _TensorMap[bool]()  # sampled actions (Distribution.sample, multinomial)
        self.cut_ids: dict[tuple[SourceLine | None, str, SourceLine | None], int] = {}
        self.cut_storages: dict[int, int] = {}  # storage address of a cut's result -> cut
        self.no_grad_lines: list[SourceLine | None] = []  # where no_grad blocks began
        self.inference_lines: list[SourceLine | None] = []  # where inference_mode blocks began
        self.inference_budget = 0  # results noted per block entry (an eval loop costs little)
        # tensors made inside an inference_mode block -> (the op's line, the block's line)
        self.inference_made: _TensorMap[InferenceOrigin] = _TensorMap()
        self.in_optimizer = 0
        self.step_orders: dict[int, int] = {}  # id(optimizer) -> order of its latest step
        self.stale = StaleGrads(events, self.order)
        self.reruns = Reruns(events)  # modules run again during a backward (checkpoints)
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
        self.outer_order = -1  # when that call began
        self.pending: list[Any] = []
        self.ctx_watched: set[NodeKey] = set()  # custom Function nodes whose ctx is watched
        self.backward_hook: Callable[[Backward, Any, tuple[Any, ...], dict[str, Any]], Any] | None
        self.backward_hook = None
        # torch functions some check wants to see called, and who hands the calls over
        self.watched_ops: Any = {}
        self.op_hook: Callable[[Any, tuple[Any, ...], dict[str, Any], Any, Any], Any] | None
        self.op_hook = None
        # modules the user called eval() (or train(False)) on: id -> (weak ref, line,
        # optimizer steps taken before the call, the user's frames of the call)
        self.evals: dict[int, tuple[weakref.ref[Any], SourceLine | None, int, Stack]] = {}
        self.train_lines: dict[int, SourceLine | None] = {}  # id -> the last train() call
        # the latest set_grad_enabled object made and what events.switches held before it:
        # a `with` or a decorator that takes it up next puts that back (it restores itself)
        self.grad_switch: tuple[int, SwitchSet | None] | None = None
        # (the hook dict's weak ref, key, the user's hook) of tensor hooks this recording
        # wrapped; given back when it ends (gradprobe._recorder_patches)
        self.wrapped_hooks: list[tuple[Any, int, Any]] = []
        # (id of a leaf, the registering line) -> ids of the hooks it registered there
        self.leaf_hooks: dict[tuple[int, SourceLine | None], list[int]] = {}
        # storages of running statistics an evaluation-mode batch norm saved for backward
        self.eval_saved_stats: set[int] = set()
        self.retie_searches = 0  # parameters replaced on a module, searched for a tie
        # (caller's code, line) -> the function that calls torch from that line (NOTE
        # [calls made from the caller's line] in gradprobe._recorder.frames)
        self.relays: dict[tuple[Any, int], Any] = {}

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
        # t.detach_() cuts t itself: its grad_fn is gone once the call returns
        detached = _grad_fn(args[0]) if func is _DETACH_INPLACE and args else None

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
            try:  # made from the caller's line, so its warnings name it
                result = call_from(plain_caller(caller), self.relays, func, args, kwargs)
            except RuntimeError as error:  # free unless raised
                if _INFERENCE_SAVED in error_text(error):
                    self._inference_use(args, kwargs)
                raise

        watched = self.watched_ops
        if watched:  # checks that asked for this function's calls: one lookup
            try:
                asked = func in watched
            except TypeError:  # an unhashable callable: no check can have asked for it
                asked = False
            if asked:
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
        if (
            func in _PURE_RESULT
            and kwargs.get("out") is None
            and len(events.discarded) < 20
            and _result_discarded(caller)
            and is_user_file(caller.f_code.co_filename)
        ):
            if line is False:
                line = _user_line(sys._getframe(1))
            if not any(seen == line for seen, _ in events.discarded):
                events.discarded.append(OpLine(line, _names(func)))
        if func in _SILENT_WRITES:
            line = self._silent_writes(func, args, kwargs, grad_in, line)
        if grad_in and func in _LOSS_TARGETS:
            self._loss_target(func, args, kwargs)
        if kind == _GRAD_READ:
            if (
                result is not None
                and events.grads_pending
                and (not events.protocol or events.protocol[-1].kind != "read")
                and is_user_file(caller.f_code.co_filename)
            ):  # a gradient check, a comparison, a norm logged: the gradients were used
                line = _user_line(sys._getframe(1)) if line is False else line
                events.protocol.append(StepEvent(next(self.order), "read", line))
            if result is not None and args and is_user_file(caller.f_code.co_filename):
                self._leaf_read(args[0])
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
                made_by = _grad_fn(args[0]) if isinstance(args[0], torch.Tensor) else None
                if made_by is not None:  # the node whose values left as Python numbers
                    events.cut_inputs[(made_by.name(), made_by._sequence_nr())] = cut
            elif self.taint and args and isinstance(args[0], torch.Tensor):
                cuts = self.taint.get(args[0])
                if cuts:  # t.detach().numpy(): values leave torch after a cut
                    events.exits.extend(cut for cut in cuts if cut not in events.exits)
                    self.last_exit = (_user_line(sys._getframe(1)), cuts)
            return result

        outputs = result if isinstance(result, torch.Tensor) else None
        if self.inference_lines and outputs is not None and self.inference_budget:
            self._inference_made(outputs)
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
                    else (
                        "detach" if _names(func) in ("detach", "detach_") else "non_differentiable"
                    ),
                    line,
                )
                self.taint.set(out, frozenset((cut,)))
                if len(self.cut_storages) < _MAX_EVENTS:  # numpy round trips share memory
                    self.cut_storages[_storage(out)] = cut
                if detached is not None:
                    events.cut_inputs[(detached.name(), detached._sequence_nr())] = cut
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
                and events.first_nan is None
                and out.is_floating_point()
            ):
                if out.requires_grad:  # values that can reach a loss, not masks or metrics
                    if kind != _INPLACE or grad_in:  # not optimizer updates
                        self._nan(func, args, kwargs, out, line, kind == _INPLACE)
                elif events.first_plain is None and not self.in_optimizer:
                    # data, targets, returns made without gradients: where a non-finite
                    # value was born before it entered the model (a no_grad normalisation)
                    self._plain_nan(func, args, kwargs, out, line, kind == _INPLACE)
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
        hook = self.op_hook
        if hook is not None:
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

    def _leaf_read(self, tensor: Any) -> None:
        """The user's code read a leaf's filled ``.grad``: note the first read, with the
        last backward before it (a read inside the loop uses the gradients; a print after
        the loop does not)."""
        if isinstance(tensor, torch.Tensor) and _grad_fn(tensor) is None:
            reads = self.events.leaf_grad_reads
            if id(tensor) not in reads and len(reads) < _MAX_EVENTS:
                reads[id(tensor)] = self.events.last_backward

    def _silent_writes(
        self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any], grad_in: bool, line: Any
    ) -> Any:
        """A call that writes arguments without moving their version counter (a training
        batch norm's running statistics): record it as a write when an earlier call in
        evaluation mode, with gradients on, saved those tensors for its backward."""
        positions, names, at = _SILENT_WRITES[func]
        written = [
            args[i] if i < len(args) else kwargs.get(name)
            for i, name in zip(positions, names, strict=True)
        ]
        training = args[at] if at < len(args) else kwargs.get("training", False)
        stats = [t for t in written if isinstance(t, torch.Tensor)]
        if not stats:
            return line
        if not training:
            if grad_in and torch.is_grad_enabled():
                self.eval_saved_stats.update(_storage(t) for t in stats)
            return line
        for tensor in stats:
            if _storage(tensor) in self.eval_saved_stats:
                if line is False:
                    line = _user_line(sys._getframe(2))
                version = _version(tensor)
                self._write(func, tensor, version, version, line)
        return line

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
        """The node-creation hook (torch >= 2.14): keep the node until its call returns.
        A leaf's AccumulateGrad, made on its first use, is the leaf, not an op: skipped,
        as the walk without the hook never records one."""
        if type(node) is not _ACCUMULATE_GRAD:
            self.pending.append(node)

    def _take_pending(self, line: SourceLine | None) -> None:
        nodes, self.pending = self.pending, []
        for node in nodes:  # creation order: children first, so edges find their parents
            self._discover(node, line)

    def _cut(self, func: Any, kind: str, line: SourceLine | None) -> int:
        op = "data" if kind == "data" else _names(func)
        # the same op line under two no_grad blocks (a helper called from both) is two cuts
        context = self.no_grad_lines[-1] if kind == "no_grad" and self.no_grad_lines else None
        key = (line, kind, context)
        ident = self.cut_ids.get(key)
        if ident is None:
            ident = self.cut_ids[key] = len(self.cut_ids)
            self.events.cuts[ident] = Cut(ident, next(self.order), line, op, kind, context)
        return ident

    def _nan(
        self,
        func: Any,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        out: torch.Tensor,
        line: Any,
        inplace: bool,
    ) -> None:
        """A result that requires grad: the first NaN, the first infinity and the first
        non-finite value born from finite inputs."""
        event = self._non_finite(func, args, kwargs, out, line, inplace)
        if event is None:
            return
        events = self.events
        if event.nan:
            events.first_nan = event
        if events.first_inf is None and (not event.nan or bool(torch.isinf(out).any())):
            events.first_inf = event
        if event.born and events.first_born is None:
            events.first_born = event

    def _plain_nan(
        self,
        func: Any,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        out: torch.Tensor,
        line: Any,
        inplace: bool,
    ) -> None:
        """The first non-finite value computed from finite inputs among tensors that do not
        require grad; kept only as the origin of a NaN that reaches the model later."""
        event = self._non_finite(func, args, kwargs, out, line, inplace)
        if event is not None and event.born:
            self.events.first_plain = event

    def _non_finite(
        self,
        func: Any,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        out: torch.Tensor,
        line: Any,
        inplace: bool,
    ) -> NonFinite | None:
        """The record of a call whose floating result is not finite; None when it is
        finite or cannot be looked at here (called from _nan/_plain_nan only: the user's
        frame is three up)."""
        if not _checkable(out):
            return None
        try:
            if out.device.type != "cpu" or out.numel() == 0:
                return None  # NOTE: deferred checks for accelerators are not implemented yet
            out = out.detach()
            if _finite(out):
                return None
            # Only now, with a non-finite result in hand (rare), look at the inputs: was the
            # value written in on purpose (a -inf mask), or born here from finite inputs?
            deliberate = _non_finite_constant(args, kwargs)
            inputs = args[1:] if inplace else args
            born = not deliberate and _inputs_finite(inputs, kwargs)
            plain = not born and not _inputs_finite(inputs, kwargs, plain_only=True)
            nan = bool(torch.isnan(out).any())
        except (RuntimeError, ValueError, NotImplementedError):
            return None  # a tensor that cannot be reduced here: not ours to check
        if line is False:
            line = _user_line(sys._getframe(3))
        return NonFinite(
            next(self.order),
            line,
            _names(func),
            nan,
            tuple(out.shape),
            _running_module(),
            self.in_optimizer > 0,
            born,
            deliberate,
            plain,
        )

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
        # (a non-tensor result too: `out[rows] = value` returns None from __setitem__)
        outs = list(_tensors(result))
        if any(out.requires_grad for out in outs):
            for out in outs:  # torch.tensor(cut values, requires_grad=True): a rebuilt leaf
                if (
                    out.requires_grad
                    and _grad_fn(out) is None
                    and not isinstance(out, torch.nn.Parameter)
                    and taint.get(out) is None
                ):
                    taint.set(out, found)
            if plain_tainted and _names(func) in _ADDITIVE and torch.is_grad_enabled():
                if line is False:
                    line = _user_line(sys._getframe(2))
                # the first per line is the finding: `q - (r + gamma * q_next.detach())`
                # runs every step of a DQN loop
                if not any(mix.line == line for mix in self.events.mixes):
                    node = next((_grad_fn(o) for o in outs if _grad_fn(o) is not None), None)
                    key = None if node is None else (node.name(), node._sequence_nr())
                    self.events.mixes.append(Mix(next(self.order), line, _names(func), found, key))
            return line
        for out in outs:
            if taint.get(out) is None:
                taint.set(out, found)
        return line


def _non_finite_constant(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """Whether a call writes a non-finite constant on purpose: ``masked_fill(m, -inf)``,
    ``x[mask] = float("-inf")``, ``torch.full(..., -inf)``, ``where(m, x, -inf)``."""
    for value in (*args, *kwargs.values()):
        if isinstance(value, float) and not math.isfinite(value):
            return True
        if (
            isinstance(value, torch.Tensor)
            and value.dim() == 0
            and value.is_floating_point()
            and not math.isfinite(float(value.detach()))
        ):
            return True
    return False


def _inputs_finite(
    args: Iterable[Any], kwargs: dict[str, Any], *, plain_only: bool = False
) -> bool:
    """Whether every floating tensor among a call's inputs is finite: a non-finite result of
    finite inputs was born in this call (an overflowing exp, log of 0, 0/0). With
    ``plain_only``, only the inputs that do not require grad are looked at."""
    for value in (*args, *kwargs.values()):
        for tensor in _tensors(value):
            if plain_only and tensor.requires_grad:
                continue
            if tensor.is_floating_point() and tensor.numel() and not _finite(tensor):
                return False
    return True
