"""The patches the recorder needs besides its mode: what no torch function call shows.

``nn.Parameter`` construction, attribute typos on tensors, module and optimizer
construction, optimizer steps, ``no_grad`` blocks, gradient clipping, AMP scaling, pruning,
distributions' ``sample``/``log_prob``, ``torch.from_numpy`` and tensor hooks.

They are installed once per process, by the first recording, and removed by the last
(NOTE [shared patches] in :mod:`gradprobe._patch`). None of them holds a recording:
each call looks up the recorder modes active in the calling thread (:data:`MODES`, NOTE
[threads] in :mod:`gradprobe._threads`) and passes straight through when there is none.
Where recordings nest in one thread (``gradprobe diagnose`` running a script that records),
every active mode takes notes, outermost first, as when each recording patched over the
previous one; a tensor hook is wrapped by the innermost recording only.
"""

from __future__ import annotations

import contextlib
import difflib
import functools
import inspect
import sys
from collections.abc import Iterable, Iterator
from types import FrameType, GeneratorType
from typing import Any

import torch

from gradprobe._patch import Patches, SharedPatches
from gradprobe._recorder import (
    _CUSTOM_NODE,
    _MAX_EVENTS,
    _MAX_FROZEN,
    _WATCHED,
    CustomFunction,
    RecorderMode,
    Reparam,
    SourceLine,
    StepEvent,
    _cloned_parameter,
    _decorator_line,
    _def_line,
    _grad_fn,
    _just_after,
    _leaves_below,
    _note_mode,
    _return_line,
    _stepped_evals,
    _storage,
    _tensors,
    _user_line,
    _uses_argument_as_gradient,
    _writes_watched,
    call_from,
    passes_calls_on,
)
from gradprobe._recorder.events import (
    BrokenTie,
    CopyFreeze,
    EmptyLoad,
    OptimizerMade,
    ParameterCopy,
    ParamHook,
    Replaced,
    Schedule,
    StackedHook,
    TensorHook,
    Typo,
)
from gradprobe._recorder.flows import INFERENCE_PER_BLOCK
from gradprobe._recorder.owners import holders_of
from gradprobe._recorder.recompute import checkpoint_patches
from gradprobe._recorder.switches import note_entered, switch_patches
from gradprobe._source import is_user_file
from gradprobe._threads import ThreadBound

__all__ = ["MODES", "SHARED", "patches"]

# The patched functions below call torch on the user's behalf: the caller is above them.
passes_calls_on(__file__)

# The recorder modes active in each thread, outermost first (record() adds and removes).
MODES: ThreadBound[RecorderMode] = ThreadBound()


def _from_caller(
    modes: tuple[RecorderMode, ...], original: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    """``original(*args, **kwargs)`` made from the line that called the patched function,
    so torch's warnings name that line (NOTE [calls made from the caller's line])."""
    if not modes:
        return original(*args, **kwargs)
    return call_from(sys._getframe(2), modes[0].relays, original, args, kwargs)


_LOSS = torch.nn.modules.loss._Loss
_LOSS_INIT = _LOSS.__init__.__code__


def _loss_reduction(frame: FrameType | None) -> object:
    """The ``reduction`` a loss module is being built with: an argument of the
    ``_Loss.__init__`` frame a few calls up (its own Module.__init__ call, maybe wrapped)."""
    for _ in range(6):
        if frame is None:
            return None
        if frame.f_code is _LOSS_INIT:
            return frame.f_locals.get("reduction")
        frame = frame.f_back
    return None


_TENSOR_ATTRS = frozenset(("requires_grad", "grad", "data", "retains_grad", "is_leaf"))
_LOOKALIKE = ("requires_grad",)


@contextlib.contextmanager
def patches(mode: RecorderMode) -> Iterator[None]:
    """The shared patches, held while ``mode``'s recording runs; on exit, tensor hooks
    this recording wrapped and that are still registered get the user's hook back."""
    SHARED.acquire()
    try:
        yield
    finally:
        _unwrap_hooks(mode)
        SHARED.release()


def _unwrap_hooks(mode: RecorderMode) -> None:
    from gradprobe._patch import WRAPPED_ATTR

    wrapped, mode.wrapped_hooks = mode.wrapped_hooks, []
    for dict_ref, key, hook in wrapped:
        with contextlib.suppress(Exception):
            hooks = dict_ref()
            if hooks is not None and getattr(hooks.get(key), WRAPPED_ATTR, None) is hook:
                hooks[key] = hook


def _install(p: Patches) -> None:
    _tensor_patches(p)
    _module_patches(p)
    _optimizer_patches(p)
    _grad_mode_patches(p)
    switch_patches(p, MODES.here)
    checkpoint_patches(p, MODES.here)
    _reparam_patches(p)
    _log_prob_patches(p)
    _scaler_patches(p)
    _schedule_patches(p)


# -- tensors ---------------------------------------------------------------------------------


def _tensor_patches(p: Patches) -> None:
    # Tensor attribute typos: `p.require_grad = False` freezes nothing.
    real_setattr = torch.Tensor.__setattr__

    def setattr_(self: torch.Tensor, name: str, value: Any) -> None:
        modes = MODES.here()
        if modes:
            _on_setattr(modes, self, name, value, sys._getframe(1))
        real_setattr(self, name, value)

    p.set(torch.Tensor, "__setattr__", setattr_)

    # nn.Parameter construction: where parameters come from, and re-wrapping.
    parameter_new = torch.nn.Parameter.__new__

    def new_parameter(cls: Any, data: Any = None, requires_grad: bool = True) -> Any:
        param = parameter_new(cls, data, requires_grad)
        modes = MODES.here()
        if modes:
            line = _user_line(sys._getframe(1))
            source = _cloned_parameter(data)
            cut_below = isinstance(data, torch.Tensor) and _grad_fn(data) is not None
            below = _leaves_below(data) if cut_below else []
            for mode in modes:
                events = mode.events
                events.parameter_lines[id(param)] = line
                if source is not None and len(events.parameter_copies) < _MAX_EVENTS:
                    events.parameter_copies.append(ParameterCopy(line, id(source), id(param)))
                if cut_below:
                    ident = mode._cut(new_parameter, "parameter", line)
                    for leaf in below:
                        events.rewrapped[leaf] = events.cuts[ident]
        return param

    p.set(torch.nn.Parameter, "__new__", new_parameter)

    # torch.from_numpy is not a torch function (no mode sees it): values coming back from
    # numpy right after a cut let them out carry that cut.
    from_numpy = torch.from_numpy

    def from_numpy_(array: Any) -> torch.Tensor:
        out = from_numpy(array)
        for mode in MODES.here():
            cut_here = mode.cut_storages.get(_storage(out)) if mode.cut_storages else None
            if cut_here is not None:
                mode.taint.set(out, frozenset((cut_here,)))
            elif mode.last_exit is not None and _just_after(
                mode.last_exit[0], _user_line(sys._getframe(1))
            ):
                mode.taint.set(out, mode.numpy_cut())
        return out

    p.set(torch, "from_numpy", from_numpy_)

    # Tensor hooks: errors name the hook function only ("hook 'f' has changed the size
    # of value"); remember where each was registered and where it returns.
    register_slot = torch.Tensor.__dict__["register_hook"]

    def register_hook(self: torch.Tensor, hook: Any) -> Any:
        if torch.compiler.is_compiling():  # dynamo traces this: leave it torch's own call
            return register_slot(self, hook)
        modes = MODES.here()
        if not modes:
            return register_slot(self, hook)
        mode = modes[-1]  # the innermost recording wraps it
        events = mode.events
        if len(events.tensor_hooks) >= _MAX_EVENTS or hasattr(hook, _WATCHED):
            return register_slot(self, hook)
        name = getattr(hook, "__name__", None) or type(hook).__name__
        node = self.grad_fn  # a leaf's hooks run before AccumulateGrad: no node of its own
        key = (node.name(), node._sequence_nr()) if node is not None else None
        line = _user_line(sys._getframe(1))
        events.tensor_hooks[name] = TensorHook(line, _return_line(hook), key)
        handle = register_slot(self, _writes_watched(hook, name, events))
        with contextlib.suppress(AttributeError):
            mode.wrapped_hooks.append((handle.hooks_dict_ref, handle.id, hook))
        if node is None:
            with contextlib.suppress(Exception):
                _note_leaf_hook(mode, self, line, name, handle.id)
        return handle

    p.set(torch.Tensor, "register_hook", register_hook)

    # Post-accumulate-grad hooks receive the parameter, not its gradient.
    post_slot = torch.Tensor.__dict__.get("register_post_accumulate_grad_hook")
    if post_slot is not None:

        def register_post(self: torch.Tensor, hook: Any) -> Any:
            modes = MODES.here()
            if modes:
                with contextlib.suppress(Exception):
                    misuse = _uses_argument_as_gradient(hook)
                    if misuse is not None:
                        line = _user_line(sys._getframe(1))
                        for mode in modes:
                            found = mode.events.param_hooks
                            if len(found) < 10 and all(m != misuse for m, _ in found):
                                found.append(ParamHook(misuse, line))
            return post_slot(self, hook)

        p.set(torch.Tensor, "register_post_accumulate_grad_hook", register_post)


def _note_leaf_hook(
    mode: RecorderMode, leaf: torch.Tensor, line: SourceLine | None, name: str, ident: int
) -> None:
    """A hook registered on a leaf (a parameter), which lives across iterations: how many
    from this line are attached to it now (GP310 when one line keeps adding them)."""
    key = (id(leaf), line)
    ids = mode.leaf_hooks.get(key)
    if ids is None:
        if len(mode.leaf_hooks) >= _MAX_EVENTS:
            return
        ids = mode.leaf_hooks[key] = []
    table = leaf._backward_hooks or {}
    ids[:] = [i for i in ids if i in table][-64:]
    ids.append(ident)
    stacked = mode.events.stacked_hooks
    if len(ids) >= 3 and (line not in stacked or stacked[line].attached < len(ids)):
        stacked[line] = StackedHook(line, name, id(leaf), len(ids))


def _note_retie(
    modes: tuple[RecorderMode, ...],
    module: torch.nn.Module,
    name: str,
    old: torch.nn.Parameter,
    caller: FrameType,
) -> None:
    """``module.<name>`` got a new Parameter while another module still holds the old one:
    the tie that assignment made is broken (the other side keeps training the old one)."""
    # a search through every object: a handful per run (load_state_dict(assign=True)
    # replaces every parameter)
    mode = modes[0]
    mode.retie_searches += 1
    if mode.retie_searches > 20:
        return
    for key, holder in holders_of(old, "_parameters"):
        if holder is module:
            continue
        line = _user_line(caller)
        for mode in modes:
            if len(mode.events.broken_ties) < 10:
                mode.events.broken_ties.append(
                    BrokenTie(line, name, type(holder).__name__, key, type(module).__name__)
                )
        return


def _construction_site(module: torch.nn.Module, frame: FrameType | None) -> SourceLine | None:
    """The first user frame from ``frame`` outwards that is not ``module``'s own
    ``__init__`` (nor a parent class's, reached through ``super().__init__()``)."""
    while frame is not None:
        code = frame.f_code
        own = code.co_name == "__init__" and frame.f_locals.get("self") is module
        if not own and is_user_file(code.co_filename):
            return (code.co_filename, frame.f_lineno, code.co_name)
        frame = frame.f_back
    return None


def _note_replaced(
    modes: tuple[RecorderMode, ...], name: str, old: Any, new: Any, caller: FrameType
) -> None:
    """A submodule or Parameter assigned over the one a module had: what it replaced, and
    the user's lines that led to it (the fix may sit in any of them)."""
    if isinstance(new, torch.nn.Module):
        before, after = list(old.parameters()), list(new.parameters())
    else:
        before, after = [old], [new]
    if not before:
        return
    same = [tuple(p.shape) for p in before] == [tuple(p.shape) for p in after]
    stack: list[SourceLine] = []
    frame: FrameType | None = caller
    while frame is not None and len(stack) < 8:
        if is_user_file(frame.f_code.co_filename):
            stack.append((frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name))
        frame = frame.f_back
    kind = "module" if isinstance(new, torch.nn.Module) else "parameter"
    old_ids = tuple(id(p) for p in before)
    for mode in modes:
        found = mode.events.replaced
        if len(found) < 64:
            found.append(
                Replaced(next(mode.order), name, kind, id(new), old_ids, same, tuple(stack))
            )


def _note_clip(
    modes: tuple[RecorderMode, ...], args: tuple[Any, ...], kwargs: dict[str, Any], caller: Any
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """A gradient clipping: how many tensors it was given and how many had a gradient. An
    iterator is read here into a list and handed on as an iterator of the same kind, so
    torch sees what it would have seen (a generator stays a generator)."""
    given = kwargs["parameters"] if "parameters" in kwargs else args[0] if args else None
    if isinstance(given, torch.Tensor):
        items: list[Any] = [given]
    elif isinstance(given, Iterator):
        items = list(given)
        again: Iterator[Any] = (
            (item for item in items) if isinstance(given, GeneratorType) else iter(items)
        )
        if "parameters" in kwargs:
            kwargs = {**kwargs, "parameters": again}
        else:
            args = (again, *args[1:])
    elif isinstance(given, Iterable):
        items = list(given)
    else:
        return args, kwargs
    tensors = [t for t in items if isinstance(t, torch.Tensor)]
    with_grad = sum(1 for t in tensors if t.grad is not None)
    line = _user_line(caller)
    for mode in modes:
        mode.events.protocol.append(
            StepEvent(next(mode.order), "clip", line, grads=with_grad, given=len(tensors))
        )
    return args, kwargs


def _note_function(modes: tuple[RecorderMode, ...], cls: Any, caller: FrameType) -> None:
    """The first apply of a user's custom Function: where its backward is, and whether
    autocast was on (its backward then runs without it unless wrapped by custom_bwd)."""
    name = getattr(cls, "__name__", "Function")
    if all(name in mode.events.custom_functions for mode in modes):
        return
    method = getattr(cls, "backward", None)
    code = getattr(inspect.unwrap(method), "__code__", None) if callable(method) else None
    if code is None or not is_user_file(code.co_filename):
        return  # torch's own Functions (checkpoint, hooks)
    wrapped = getattr(getattr(cls, "backward", None), "__code__", None)
    note = CustomFunction(
        name=name,
        backward=_def_line(code),
        applied=_user_line(caller),
        autocast=any(torch.is_autocast_enabled(device) for device in ("cpu", "cuda")),
        custom_bwd=wrapped is not None and wrapped.co_name == "decorate_bwd",
    )
    for mode in modes:
        if len(mode.events.custom_functions) < _MAX_EVENTS:
            mode.events.custom_functions.setdefault(name, note)


def _on_setattr(
    modes: tuple[RecorderMode, ...], tensor: torch.Tensor, name: str, value: Any, caller: FrameType
) -> None:
    if name == "grad":
        if value is not None:  # gradients written by hand (per-sample DP-SGD, torch.func)
            for mode in modes:
                if mode.in_optimizer == 0:
                    protocol = mode.events.protocol
                    if not protocol or protocol[-1].kind != "grads":
                        protocol.append(StepEvent(next(mode.order), "grads", _user_line(caller)))
        elif value is None and tensor.grad is not None:
            # zero_grad() sets every parameter's: one event per run of them from one place
            place = (id(caller), caller.f_lasti)
            for mode in modes:
                protocol = mode.events.protocol
                if (
                    mode.in_optimizer == 0
                    and mode.zeroing == 0
                    and (not protocol or protocol[-1].kind != "zero" or mode.zero_place != place)
                ):
                    mode.zero_place = place
                    protocol.append(StepEvent(next(mode.order), "zero", _user_line(caller)))
    elif name == "requires_grad":
        if (
            value is False
            and not isinstance(tensor, torch.nn.Parameter)
            and is_user_file(caller.f_code.co_filename)  # not torch.load's
        ):  # state_dict()[k].requires_grad = False: a detached copy, not the parameter
            for mode in modes:
                events = mode.events
                if len(events.copy_freezes) < _MAX_EVENTS:
                    events.copy_freezes.append(CopyFreeze(_user_line(caller), _storage(tensor)))
    elif name not in _TENSOR_ATTRS and not name.startswith("_"):
        close = difflib.get_close_matches(name, _LOOKALIKE, n=1, cutoff=0.8)
        if close:
            for mode in modes:
                typo = Typo(_user_line(caller), name, close[0], _storage(tensor))
                mode.events.typos.append(typo)


# -- modules ---------------------------------------------------------------------------------


def _module_patches(p: Patches) -> None:
    # Re-tying: a Parameter replaced on one module while another module still holds the
    # old one (weights tied by assignment, then one side reassigned).
    module_setattr = torch.nn.Module.__setattr__

    def setattr_module(self: torch.nn.Module, name: str, value: Any) -> None:
        old = None
        if isinstance(value, torch.nn.Parameter):
            old = self.__dict__.get("_parameters", {}).get(name)
        elif isinstance(value, torch.nn.Module):
            old = self.__dict__.get("_modules", {}).get(name)
        module_setattr(self, name, value)
        if old is not None and old is not value:
            modes = MODES.here()
            if modes:
                with contextlib.suppress(Exception):
                    _note_replaced(modes, name, old, value, sys._getframe(1))
                if isinstance(old, torch.nn.Parameter):
                    with contextlib.suppress(Exception):
                        _note_retie(modes, self, name, old, sys._getframe(1))

    p.set(torch.nn.Module, "__setattr__", setattr_module)

    # Module construction: where an nn.ReLU(inplace=True) that later overwrites a saved
    # tensor was built.
    module_init = torch.nn.Module.__init__

    def init_module(self: torch.nn.Module, *args: Any, **kwargs: Any) -> None:
        module_init(self, *args, **kwargs)
        modes = MODES.here()
        if modes:
            line = _user_line(sys._getframe(1))
            for mode in modes:
                events = mode.events
                if len(events.module_lines) < _MAX_EVENTS:
                    events.module_lines[id(self)] = line
                    events.module_orders[id(self)] = next(mode.order)
                    with contextlib.suppress(Exception):
                        site = _construction_site(self, sys._getframe(1))
                        events.module_sites[id(self)] = site
                if (
                    isinstance(self, _LOSS)
                    and _loss_reduction(sys._getframe(1)) == "none"
                    and len(events.unreduced_losses) < 64
                ):
                    events.unreduced_losses.append((type(self).__name__, line))

    p.set(torch.nn.Module, "__init__", init_module)

    # model.half() / .bfloat16() / .to(torch.float16): where parameters became low precision
    for name in ("half", "bfloat16", "to"):
        p.set(torch.nn.Module, name, _noting_precision(getattr(torch.nn.Module, name)))

    # Custom Functions: their ctx, as each apply returns (tensors kept on it, GP129).
    apply_now = torch.autograd.Function.__dict__["apply"]

    def apply(cls: Any, *args: Any, **kwargs: Any) -> Any:
        result = apply_now.__get__(None, cls)(*args, **kwargs)
        modes = MODES.here()
        if modes:
            with contextlib.suppress(Exception):
                _note_function(modes, cls, sys._getframe(1))
            with contextlib.suppress(Exception):
                for out in _tensors(result):
                    fn = _grad_fn(out)
                    if isinstance(fn, _CUSTOM_NODE):
                        line = _user_line(sys._getframe(1))
                        for mode in modes:
                            mode.watch_ctx(fn, line)
                        break
        return result

    p.set(torch.autograd.Function, "apply", classmethod(apply))

    # load_state_dict(strict=False) that loads nothing: a "module." prefix from DDP.
    load = torch.nn.Module.load_state_dict

    def load_state_dict(self: torch.nn.Module, state_dict: Any, *args: Any, **kwargs: Any) -> Any:
        result = load(self, state_dict, *args, **kwargs)
        modes = MODES.here()
        if not modes:
            return result
        unexpected = list(getattr(result, "unexpected_keys", ()))
        missing = list(getattr(result, "missing_keys", ()))
        loaded = len(state_dict) - len(unexpected) if hasattr(state_dict, "__len__") else 1
        if unexpected and loaded == 0:
            line = _user_line(sys._getframe(1))
            for mode in modes:
                mode.events.empty_loads.append(EmptyLoad(line, unexpected, missing))
        return result

    p.set(torch.nn.Module, "load_state_dict", load_state_dict)

    # Module.train(False) / eval() called by the user on a module (not passed down from
    # a parent's train()): someone freezing a layer with eval() (GP111).
    module_train = torch.nn.Module.train

    def train_module(self: torch.nn.Module, mode_: bool = True) -> Any:
        for mode in MODES.here():
            _note_mode(mode, self, mode_, sys._getframe(1))
        return module_train(self, mode_)

    p.set(torch.nn.Module, "train", train_module)

    # Gradient clipping before backward() clips the gradients about to be replaced.
    clip_module = torch.nn.utils.clip_grad
    for clip_name in ("clip_grad_norm_", "clip_grad_value_"):
        for owner in (torch.nn.utils, clip_module):
            original_clip = owner.__dict__.get(clip_name)
            if original_clip is None:
                continue

            def clip(*args: Any, __original: Any = original_clip, **kwargs: Any) -> Any:
                modes = MODES.here()
                if modes:
                    args, kwargs = _note_clip(modes, args, kwargs, sys._getframe(1))
                return __original(*args, **kwargs)

            p.set(owner, clip_name, clip)


# -- optimizers ------------------------------------------------------------------------------


def _optimizer_patches(p: Patches) -> None:
    # Optimizer construction: which parameters it collected, and when.
    optimizer_init = torch.optim.Optimizer.__init__

    def init_optimizer(self: Any, *args: Any, **kwargs: Any) -> None:
        modes = MODES.here()
        _from_caller(modes, optimizer_init, (self, *args), kwargs)
        if modes:
            line = _user_line(sys._getframe(1))
            for mode in modes:
                mode.events.optimizer_lines[id(self)] = OptimizerMade(next(mode.order), line)

    p.set(torch.optim.Optimizer, "__init__", init_optimizer)

    # optimizer.zero_grad(): which optimizer dropped its gradients, and whether they held
    # work none of its steps used (the p.grad = None it does inside is not noted again)
    optimizer_zero = torch.optim.Optimizer.zero_grad

    def zero_grad(self: Any, *args: Any, **kwargs: Any) -> Any:
        modes = MODES.here()
        if not modes:
            return optimizer_zero(self, *args, **kwargs)
        with contextlib.suppress(Exception):
            _note_zero_grad(modes, self, sys._getframe(1))
        for mode in modes:
            mode.zeroing += 1
        try:
            return _from_caller(modes, optimizer_zero, (self, *args), kwargs)
        finally:
            for mode in modes:
                mode.zeroing -= 1

    p.set(torch.optim.Optimizer, "zero_grad", zero_grad)

    # Optimizer steps: writes made inside one are updates, not accidents. The global step
    # hooks fire for every optimizer in every thread: only this thread's modes look.
    from torch.optim.optimizer import (
        register_optimizer_step_post_hook,
        register_optimizer_step_pre_hook,
    )

    def pre(optimizer: Any, args: Any = (), kwargs: Any = None) -> Any:
        modes = MODES.here()
        if modes:
            caller = sys._getframe(1)
            # torch hands the hook step's own arguments, the optimizer first
            given = args[1:] if args and args[0] is optimizer else args
            closure = bool(given) or bool(kwargs and kwargs.get("closure") is not None)
            for mode in modes:
                _before_step(mode, optimizer, caller, closure)
            if closure:
                with contextlib.suppress(Exception):
                    return _user_closure(args, kwargs, optimizer, list(modes))
        return None

    def post(optimizer: Any, *_: Any) -> None:
        for mode in MODES.here():
            _after_step(mode, optimizer)

    for handle in (register_optimizer_step_pre_hook(pre), register_optimizer_step_post_hook(post)):
        p.call(handle.remove)


def _note_zero_grad(modes: tuple[RecorderMode, ...], optimizer: Any, caller: FrameType) -> None:
    line = _user_line(caller)
    params = [p for group in optimizer.param_groups for p in group["params"]]
    for mode in modes:
        if mode.in_optimizer:
            continue  # a closure's zero_grad runs inside the step
        fresh = mode.stale.fresh(optimizer, params)
        mode.events.protocol.append(
            StepEvent(next(mode.order), "zero", line, optimizer=id(optimizer), grads=int(fresh))
        )


def _user_closure(args: Any, kwargs: Any, optimizer: Any, modes: list[RecorderMode]) -> Any:
    """The step's arguments with its closure wrapped: the closure is the user's forward and
    backward (``opt.step(closure)``, LBFGS, Lightning's automatic optimization), not the
    optimizer's update, so while it runs the modes are not inside the step."""
    kwargs = dict(kwargs or {})
    args = tuple(args)
    first = 1 if args and args[0] is optimizer else 0
    if kwargs.get("closure") is not None:
        kwargs["closure"] = _outside_step(kwargs["closure"], modes)
    elif len(args) > first and callable(args[first]):
        args = (*args[:first], _outside_step(args[first], modes), *args[first + 1 :])
    else:
        return None
    return args, kwargs


def _outside_step(closure: Any, modes: list[RecorderMode]) -> Any:
    @functools.wraps(closure)
    def run(*args: Any, **kwargs: Any) -> Any:
        left = [mode for mode in modes if mode.in_optimizer > 0]
        for mode in left:
            mode.in_optimizer -= 1
            # An optimizer that calls the closure again (LBFGS) has used the gradients
            # of the previous call: zeroing them in the closure throws nothing away.
            mode.events.grads_pending = False
            mode.events.protocol.append(StepEvent(next(mode.order), "closure", None))
        try:
            return closure(*args, **kwargs)
        finally:
            for mode in left:
                mode.in_optimizer += 1

    return run


def _before_step(mode: RecorderMode, optimizer: Any, caller: FrameType, closure: bool) -> None:
    events = mode.events
    mode.in_optimizer += 1
    with contextlib.suppress(TypeError):
        mode.optimizers.add(optimizer)
    # Parameters the optimizer holds but that have no gradient while others do: the
    # user meant to train them (GP107 names what cut them off).
    with contextlib.suppress(Exception):
        params = [p for group in optimizer.param_groups for p in group["params"] if p.requires_grad]
        asked = events.last_inputs
        if asked is not None:  # backward(inputs=...) left the others out on purpose
            params = [p for p in params if id(p) in asked]
        if any(p.grad is not None for p in params):
            for p in params:
                if p.grad is None:
                    events.starved.add(id(p))
                else:
                    events.fed.add(id(p))
        elif (
            (
                # a backward since this optimizer's own last step (another optimizer may have
                # stepped after it: a critic's, then the encoder's whose input was under no_grad)
                events.grads_pending
                or events.last_backward > mode.step_orders.get(id(optimizer), -1)
            )
            and len(events.idle) < _MAX_EVENTS
            and not _reset_since_backward(events)
        ):
            events.idle.update(id(p) for p in params)
        if mode.evals:
            _stepped_evals(mode, {id(p) for p in params if p.grad is not None}, caller)
    if mode.in_optimizer == 1:
        mode.step_line = _user_line(caller)
        with contextlib.suppress(Exception):
            with_grad = sum(
                1 for group in optimizer.param_groups for p in group["params"] if p.grad is not None
            )
            events.protocol.append(
                StepEvent(
                    next(mode.order),
                    "step",
                    mode.step_line,
                    optimizer=id(optimizer),
                    grads=with_grad,
                    closure=closure,
                    sums=mode.stale.summed(
                        optimizer, [p for group in optimizer.param_groups for p in group["params"]]
                    ),
                )
            )
        if mode.turned_off:
            with contextlib.suppress(Exception), torch._C.DisableTorchFunction():
                mode.frozen_in_step = [
                    (p, p._version, float(p.sum()), off[0])
                    for group in optimizer.param_groups
                    for p in group["params"]
                    if not p.requires_grad
                    and p.grad is not None
                    and p.device.type == "cpu"  # .sum() is read on the host
                    and (off := mode.turned_off.get(p)) is not None
                ][:_MAX_FROZEN]


def _reset_since_backward(events: Any) -> bool:
    """Whether gradients were reset (``zero_grad()``, ``grad = None``) after the latest
    backward: parameters without a gradient then had theirs taken, not never filled."""
    for seen, event in enumerate(reversed(events.protocol)):
        if event.kind == "backward" or seen > 64:
            return False
        if event.kind == "zero":
            return True
    return False


def _after_step(mode: RecorderMode, optimizer: Any) -> None:
    events = mode.events
    if mode.in_optimizer == 1:
        with contextlib.suppress(Exception):
            params = [p for group in optimizer.param_groups for p in group["params"]]
            mode.stale.after_step(optimizer, params)
        frozen, mode.frozen_in_step = mode.frozen_in_step, []
        moved: dict[SourceLine | None, list[int]] = {}
        with torch._C.DisableTorchFunction():
            for param, version, total, off in frozen:
                # plain SGD adds lr * 0: the version moves, the values do not
                if param._version != version and float(param.sum()) != total:
                    moved.setdefault(off, []).append(id(param))
        for off, ids in moved.items():
            events.protocol.append(
                StepEvent(
                    next(mode.order),
                    "moved",
                    mode.step_line,
                    optimizer=id(optimizer),
                    origin=off,
                    params=tuple(ids),
                )
            )
    mode.in_optimizer = max(0, mode.in_optimizer - 1)
    if mode.in_optimizer == 0 and len(mode.step_orders) < _MAX_EVENTS:
        mode.step_orders[id(optimizer)] = next(mode.order)
    events.steps += 1
    events.grads_pending = False


# -- grad mode, AMP ----------------------------------------------------------------------------


def _grad_mode_patches(p: Patches) -> None:
    # Where gradients were turned off: a cut under no_grad names the `with` line too.
    for context_class in (torch.no_grad, torch.inference_mode):
        enter, leave = context_class.__dict__["__enter__"], context_class.__dict__["__exit__"]

        inference = context_class is torch.inference_mode

        def entering(
            self: Any,
            enter: Any = enter,
            name: str = context_class.__name__,
            inference: bool = inference,
        ) -> Any:
            modes = MODES.here()
            if modes:
                caller = sys._getframe(1)
                line = _decorator_line(caller, name) or _user_line(caller)
                note_entered(modes, caller, name)
                for mode in modes:
                    mode.no_grad_lines.append(line)
                    if inference:  # what is made inside is an inference tensor (GP114)
                        mode.inference_lines.append(line)
                        mode.inference_budget = INFERENCE_PER_BLOCK
            return enter(self)

        def leaving(self: Any, *exc: Any, leave: Any = leave, inference: bool = inference) -> Any:
            for mode in MODES.here():
                if mode.no_grad_lines:
                    mode.no_grad_lines.pop()
                if inference and mode.inference_lines:
                    mode.inference_lines.pop()
            return leave(self, *exc)

        p.set(context_class, "__enter__", entering)
        p.set(context_class, "__exit__", leaving)


def _schedule_patches(p: Patches) -> None:
    # Learning-rate schedulers: which optimizer each drives, and how often the user steps it
    # (a per-epoch schedule stepped every batch collapses the learning rate: GP166).
    base = getattr(getattr(torch.optim, "lr_scheduler", None), "LRScheduler", None)
    if base is None or "step" not in base.__dict__:
        return
    original_step = base.__dict__["step"]

    def step(self: Any, *args: Any, **kwargs: Any) -> Any:
        modes = MODES.here()
        if modes:
            with contextlib.suppress(Exception):
                _note_schedule(modes, self, sys._getframe(1))
        return _from_caller(modes, original_step, (self, *args), kwargs)

    p.set(base, "step", step)


def _note_schedule(modes: tuple[RecorderMode, ...], scheduler: Any, caller: FrameType) -> None:
    line = _user_line(caller)
    first = getattr(scheduler, "_step_count", 0) == 0  # the step its constructor makes
    for mode in modes:
        schedules = mode.events.schedules
        note = schedules.get(id(scheduler))
        if note is None:
            if not first or len(schedules) >= _MAX_EVENTS:
                continue
            optimizer = getattr(scheduler, "optimizer", None)
            schedules[id(scheduler)] = Schedule(type(scheduler).__name__, line, id(optimizer))
        elif not first:
            note.steps += 1
            note.line = line


def _scaler_patches(p: Patches) -> None:
    # AMP: a GradScaler skips steps whose gradients overflowed, on purpose.
    scaler_class = getattr(getattr(torch, "amp", None), "GradScaler", None)
    if scaler_class is None:
        return
    original_scale = scaler_class.__dict__["scale"]
    original_unscale = scaler_class.__dict__["unscale_"]

    def scale(self: Any, outputs: Any) -> Any:
        modes = MODES.here()
        if modes:
            enabled = False
            with contextlib.suppress(Exception):
                enabled = bool(self.is_enabled())
            for mode in modes:
                mode.events.amp = True
                if enabled:
                    protocol = mode.events.protocol
                    protocol.append(StepEvent(next(mode.order), "scale", None))
        return original_scale(self, outputs)

    def unscale_(self: Any, optimizer: Any) -> Any:
        for mode in MODES.here():
            mode.events.protocol.append(StepEvent(next(mode.order), "unscale", None))
        return original_unscale(self, optimizer)

    p.set(scaler_class, "scale", scale)
    p.set(scaler_class, "unscale_", unscale_)


# -- distributions, pruning, parametrizations ----------------------------------------------------


def _log_prob_patches(p: Patches) -> None:
    """Mark what ``Distribution.sample`` returns (sampled actions) and what
    ``Distribution.log_prob`` returns for them: score-function terms, see
    ``RecorderMode._log_prob_flow``."""
    from torch import distributions

    classes = [
        cls
        for cls in vars(distributions).values()
        if isinstance(cls, type) and issubclass(cls, distributions.Distribution)
    ]
    for cls in classes:
        original = cls.__dict__.get("log_prob")
        if original is None or not callable(original):
            continue

        def log_prob(self: Any, value: Any, _original: Any = original) -> Any:
            out = _original(self, value)
            modes = MODES.here()
            if modes and isinstance(out, torch.Tensor) and out.requires_grad:
                for mode in modes:
                    if mode.is_sample(value):
                        mode.log_probs.set(out, True)
            return out

        p.set(cls, "log_prob", log_prob)
    for cls in classes:
        original = cls.__dict__.get("sample")
        if original is None or not callable(original):
            continue

        def sample(self: Any, *args: Any, _original: Any = original, **kwargs: Any) -> Any:
            out = _original(self, *args, **kwargs)
            modes = MODES.here()
            if modes and isinstance(out, torch.Tensor) and not out.requires_grad:
                for mode in modes:
                    mode.samples.set(out, True)
            return out

        p.set(cls, "sample", sample)


def _reparam_patches(p: Patches) -> None:
    """Note where pruning and parametrizations turn a parameter into a tensor recomputed
    in every forward (its ``.grad`` stays None)."""
    from torch.nn.utils import parametrize, prune

    base = prune.BasePruningMethod
    previous_apply = base.__dict__["apply"]  # a classmethod

    def apply(cls: Any, module: Any, name: str, *args: Any, **kwargs: Any) -> Any:
        method = previous_apply.__func__(cls, module, name, *args, **kwargs)
        modes = MODES.here()
        orig = module._parameters.get(f"{name}_orig") if modes else None
        if orig is not None:
            line = _user_line(sys._getframe(1))
            for mode in modes:
                if id(orig) not in mode.events.reparams:
                    mode.events.reparams[id(orig)] = Reparam(line, f"{name}_orig", name, "pruning")
        return method

    p.set(base, "apply", classmethod(apply))
    previous_register = parametrize.register_parametrization

    def register(module: Any, tensor_name: str, *args: Any, **kwargs: Any) -> Any:
        result = previous_register(module, tensor_name, *args, **kwargs)
        modes = MODES.here()
        if modes:
            with contextlib.suppress(AttributeError, KeyError, TypeError):
                holder = module.parametrizations[tensor_name]
                line = _user_line(sys._getframe(1))
                for name, param in holder.named_parameters(recurse=False):
                    for mode in modes:
                        if id(param) not in mode.events.reparams:
                            mode.events.reparams[id(param)] = Reparam(
                                line,
                                f"parametrizations.{tensor_name}.{name}",
                                tensor_name,
                                "a parametrization",
                            )
        return result

    p.set(parametrize, "register_parametrization", register)


SHARED = SharedPatches(_install)


_LOW_PRECISION = (torch.float16, torch.bfloat16)


def _noting_precision(convert: Any) -> Any:
    """``Module.half`` (and ``bfloat16``, ``to``) that notes the user's line when the module's
    parameters come out in 16 bits (GP162 names it: a GradScaler cannot unscale them)."""

    @functools.wraps(convert)
    def noted(self: torch.nn.Module, *args: Any, **kwargs: Any) -> Any:
        result = convert(self, *args, **kwargs)
        modes = MODES.here()
        if modes:
            with contextlib.suppress(Exception):
                first = next(self.parameters(), None)
                if first is not None and first.dtype in _LOW_PRECISION:
                    line = _user_line(sys._getframe(1))
                    for mode in modes:
                        events = mode.events
                        if len(events.low_precision) < _MAX_EVENTS:
                            events.low_precision.append(line)
        return result

    return noted
