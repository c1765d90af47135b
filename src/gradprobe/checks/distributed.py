"""Distributed: what DistributedDataParallel does not say, per rank and across ranks.

In each process the check :class:`DistributedRun` watches the ``DistributedDataParallel``
models built while recording: which parameters each rank handed to the constructor, which
parameters each forward left unused (the parameters the autograd graph of its output does
not reach, as DDP's own ``find_unused_parameters`` search finds them), and from which line
each sub-module was called. Under ``gradprobe diagnose`` it appends these notes to the
run's directory (:mod:`gradprobe._ranklog`); :func:`across_ranks` compares the notes of all
ranks once the run is over:

- GP411: parameters unused on some ranks and used on others, with the call that did not
  run there and the branch around it;
- GP413: ranks that handed DDP different models (names and shapes that differ);
- GP414: a NaN or infinity born on one rank and spread to the others by the gradient
  all-reduce;
- GP415: ``find_unused_parameters=True`` where no parameter was ever unused.

At the end of a diagnosed run (in ``destroy_process_group()``, or when the recording ends
with the process group still up) each rank compares two checksums per parameter with the
other ranks through the store of the run's own process group: parameters whose values
differ across ranks are ones DDP did not synchronise (GP412), named with the line that put
them out of DDP's reach (added or replaced after the model was wrapped, unfrozen after it).
"""

from __future__ import annotations

import ast
import difflib
import json
import linecache
import sys
import threading
import weakref
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import torch

from gradprobe import _active, _ranklog
from gradprobe._patch import Patches, SharedPatches
from gradprobe._recorder import SourceLine
from gradprobe._recorder.frames import _user_line
from gradprobe.checks._api import BackwardCall, Check, Run, StepCall, register
from gradprobe.checks._common import _locations, _where
from gradprobe.findings import Finding, make_finding

__all__ = ["DistributedRun", "across_ranks"]

_SLOTS = 16  # checksum slots shared by parameters added after wrapping (hashed by name)
# NOTE [gloo work tensors]
# GP412's comparison goes through the process group's store, not a collective: gloo's
# worker thread destroys a finished collective's work object some time after the call
# returned, and when the main thread is destroying the process group at that moment (the
# DDP model freed at the end of the script), a work tensor that Python has dropped needs
# the GIL to be released and the process deadlocks. A collective right before
# destroy_process_group() made that race frequent; a store key never touches it.
# NOTE [process groups outlive the models]
# The same race ends a run through DDP's own collectives. The reducer holds the process
# group in C++; when the DDP model is freed, the reducer's destructor runs with the GIL held
# and, if it drops the last reference, the group joins gloo's worker threads. A worker
# thread still destroying a finished all-reduce whose captured thread-local state holds a
# Python object waits for the GIL, and the process deadlocks. Plain torch 2.13 does it too
# when torch._dynamo was imported before init_process_group (4 of 6 two-rank runs here), as
# record() does; under gradprobe it hung 1 in 78 runs under load, and one DDP job in 3 of 5
# CI runs. So a recording keeps a Python reference to each DDP model's group until it
# stops; the group is then destroyed through its Python binding, which releases the GIL
# first (0 hangs in 160 runs since).
_WAIT = timedelta(seconds=30)  # the most a rank waits for the others' checksums
_MAX_NOTES = 2_000  # forward notes per model; later forwards are noted only when unusual


@dataclass
class _Wrapped:
    """What was true of one DDP model when it was built, and what happened since."""

    order: list[str]  # parameter names at construction, in order
    ids: dict[str, int]  # name -> id of the parameter DDP took
    frozen: set[int]  # ids of parameters that did not require grad then (DDP skips them)
    ignored: set[str]  # names DDP was told to ignore
    modules: dict[int, str]  # id(sub-module) -> its name
    line: SourceLine | None
    find_unused: bool
    group: Any
    rank: int | None
    serial: int = 0  # the how-manieth DDP model of this process (the same on every rank)
    forwards: int = 0
    failed: bool = False
    compared: bool = False
    call_lines: dict[str, SourceLine | None] = field(default_factory=dict)
    called: set[str] = field(default_factory=set)  # sub-modules called in this forward
    # GP416: whether the latest forward with gradients will all-reduce in its backward (DDP
    # decides at forward time), the no_sync() line it ran under, and a backward since
    synced: bool = True
    no_sync_line: SourceLine | None = None
    backward_since: bool = False


def _owner(ddp: Any = None) -> DistributedRun | None:
    """The live check that serves this DDP model (the outermost recording's), or the one
    that would adopt a new model."""
    with _LIVE_LOCK:
        live = list(_LIVE)
    if ddp is None:
        return live[0] if live else None
    return next((check for check in live if ddp in check._models), None)


def _install(patches: Patches) -> None:
    """DistributedDataParallel's constructor and forward, and destroy_process_group, wrapped
    once per process for every recording (NOTE [shared patches] in gradprobe._patch)."""
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel

    real_init: Callable[..., None] = DistributedDataParallel.__init__
    real_forward: Callable[..., Any] = DistributedDataParallel.forward
    real_destroy = dist.destroy_process_group
    real_no_sync: Callable[..., Any] = DistributedDataParallel.no_sync

    def no_sync(ddp: Any) -> Any:
        check = _owner(ddp)
        if check is not None and ddp in check._models:
            check._models[ddp].no_sync_line = _user_line(sys._getframe(1))
        return real_no_sync(ddp)

    def init(ddp: Any, module: torch.nn.Module, *args: Any, **kwargs: Any) -> None:
        check = _owner()
        if check is None:
            real_init(ddp, module, *args, **kwargs)
            return
        line = _user_line(sys._getframe(1))
        before = check._before_init(module, kwargs.get("process_group"), line)
        real_init(ddp, module, *args, **kwargs)
        check._after_init(ddp, module, before, line)

    def forward(ddp: Any, *args: Any, **kwargs: Any) -> Any:
        check = _owner(ddp)
        if check is None:
            return real_forward(ddp, *args, **kwargs)
        state = check._models[ddp]
        check._inside.append(state)
        hook = torch.nn.modules.module.register_module_forward_pre_hook(check._called)
        try:
            out = real_forward(ddp, *args, **kwargs)
        except BaseException:
            state.failed = True
            raise
        finally:
            hook.remove()
            check._inside.pop()
        check._after_forward(ddp, state, out)
        return out

    def destroy_process_group(*args: Any, **kwargs: Any) -> Any:
        with _LIVE_LOCK:
            live = list(_LIVE)
        for check in live:
            check._compare_all()
        return real_destroy(*args, **kwargs)

    patches.set(DistributedDataParallel, "__init__", init)
    patches.set(DistributedDataParallel, "forward", forward)
    patches.set(DistributedDataParallel, "no_sync", no_sync)
    patches.set(dist, "destroy_process_group", destroy_process_group)
    if dist.distributed_c10d.destroy_process_group is real_destroy:
        patches.set(dist.distributed_c10d, "destroy_process_group", destroy_process_group)


_SHARED = SharedPatches(_install)
_LIVE: list[DistributedRun] = []
_LIVE_LOCK = threading.Lock()


def _rank_world(group: Any = None) -> tuple[int | None, int | None]:
    import torch.distributed as dist

    try:
        if dist.is_available() and dist.is_initialized():
            return dist.get_rank(group), dist.get_world_size(group)
    except (RuntimeError, ValueError):
        pass
    return None, None


def _json_line(line: SourceLine | None) -> list[Any] | None:
    return None if line is None else [line[0], line[1], line[2]]


@register
class DistributedRun(Check):
    """DistributedDataParallel models: notes per rank, and the end-of-run checksum
    comparison (GP412). Cross-rank findings come from :func:`across_ranks`."""

    name = "gradprobe.distributed.ddp"
    codes = ("GP411", "GP412", "GP413", "GP414", "GP415", "GP416")

    def __init__(self) -> None:
        self._acquired = False
        self._built = 0
        self._turned: Any = None  # the recorder's map: where requires_grad was turned on
        self._models: weakref.WeakKeyDictionary[Any, _Wrapped] = weakref.WeakKeyDictionary()
        self._groups: list[Any] = []  # NOTE [process groups outlive the models]
        self._inside: list[_Wrapped] = []
        self._found: list[Finding] = []
        self._run: Run | None = None
        self._backwards = 0
        self._loss_noted = False
        self._grads_noted = False
        self._unsynced_found = False

    def start(self, run: Run) -> None:
        if not torch.distributed.is_available():
            return
        self._run = run
        rank, world = _rank_world()
        if rank is not None:
            _ranklog.note("rank", rank=rank, world=world)
        _SHARED.acquire()
        self._acquired = True
        with _LIVE_LOCK:
            _LIVE.append(self)

    def stop(self) -> None:
        self._groups.clear()  # NOTE [process groups outlive the models]
        with _LIVE_LOCK:
            if self in _LIVE:
                _LIVE.remove(self)
        if self._acquired:
            self._acquired = False
            _SHARED.release()

    def on_backward(self, call: BackwardCall) -> None:
        """Note the first backward whose loss is not finite on this rank, with the line
        where its first NaN/infinity was made."""
        if not self._models:
            return
        self._backwards += 1
        for state in self._models.values():
            state.backward_since = True
        if self._loss_noted or all(_finite(root) for root in call.roots):
            return
        self._loss_noted = True
        events = call.run.events
        first = events.first_born or events.first_inf or events.first_nan
        born = first if first is not None and not first.in_step else None
        _ranklog.note(
            "nonfinite_loss",
            rank=self._rank(),
            backward=self._backwards,
            line=_json_line(born.line if born is not None else None),
            op=born.op if born is not None else None,
        )

    def on_step(self, step: StepCall) -> None:
        """A step on gradients DDP never all-reduced (GP416); note the first optimizer step
        of a DDP model whose gradients are not finite."""
        if not self._models:
            return
        if not self._unsynced_found:
            self._unsynced_step(step)
        if self._grads_noted:
            return
        for ddp in list(self._models):
            if not all(_finite(p.grad) for p in ddp.parameters() if p.grad is not None):
                self._grads_noted = True
                _ranklog.note(
                    "nonfinite_grads",
                    rank=self._rank(),
                    backward=self._backwards,
                    line=_json_line(step.line),
                )
                return

    def _unsynced_step(self, step: StepCall) -> None:
        """GP416: the latest backward before this step came from a forward run inside
        ``no_sync()``, so the gradients it adds were never all-reduced: each rank steps
        with its own."""
        unsynced = [
            (ddp, state)
            for ddp, state in list(self._models.items())
            if not state.synced and state.backward_since
        ]
        if not unsynced:
            return
        held = {id(p) for group in step.optimizer.param_groups for p in group["params"]}
        for ddp, state in unsynced:
            if not any(id(p) in held for p in ddp.parameters()):
                continue  # another model's optimizer
            self._unsynced_found = True
            line = state.no_sync_line
            stepped = step.line
            self._found.append(
                make_finding(
                    "GP416",
                    message=(
                        f"optimizer.step() at {_where(stepped)} applied gradients that "
                        "DistributedDataParallel never all-reduced: the forward of the last "
                        f"backward before it ran inside no_sync() (at {_where(line)}), so "
                        "each rank stepped with its own local gradients and the replicas "
                        "drift apart with no error. Run the last micro-batch of each "
                        "accumulation window outside no_sync(): its backward then "
                        "all-reduces the whole accumulated sum."
                    ),
                    locations=_locations((line, "cause"), (stepped, "read")),
                )
            )
            return

    def _rank(self) -> int | None:
        return next((state.rank for state in self._models.values()), None)

    def conclude(self, run: Run) -> Iterable[Finding]:
        if run.final and run.error is None:
            self._compare_all()
        for state in list(self._models.values()):
            _ranklog.note(
                "summary",
                rank=state.rank,
                forwards=state.forwards,
                find_unused=state.find_unused,
                line=_json_line(state.line),
            )
        return list(self._found)

    # -- construction -----------------------------------------------------------------------

    def _before_init(
        self, module: torch.nn.Module, group: Any, line: SourceLine | None
    ) -> list[list[Any]]:
        """Note the model this rank hands to DDP before DDP compares it across ranks (which
        may raise, or wait for ever on a rank that never gets there)."""
        rank, world = _rank_world(group)
        lines = self._run.events.parameter_lines if self._run is not None else {}
        params = [
            [name, _made_shape(p), p.requires_grad, _json_line(lines.get(id(p)))]
            for name, p in module.named_parameters()
        ]
        _ranklog.note("rank", rank=rank, world=world)
        _ranklog.note("ddp_init", rank=rank, line=_json_line(line), params=params)
        return params

    def _after_init(
        self, ddp: Any, module: torch.nn.Module, params: list[list[Any]], line: SourceLine | None
    ) -> None:
        named = dict(module.named_parameters())
        group = getattr(ddp, "process_group", None)
        if group is not None and all(group is not kept for kept in self._groups):
            self._groups.append(group)
        rank, _ = _rank_world(group)
        self._built += 1
        self._models[ddp] = _Wrapped(
            order=[name for name, *_ in params],
            ids={name: id(p) for name, p in named.items()},
            frozen={id(p) for p in named.values() if not p.requires_grad},
            ignored=set(getattr(ddp, "parameters_to_ignore", ()) or ()),
            modules={id(m): name for name, m in module.named_modules()},
            line=line,
            find_unused=bool(getattr(ddp, "find_unused_parameters", False)),
            group=group,
            rank=rank,
            serial=self._built,
        )
        if self._turned is None:  # where requires_grad gets turned on (GP412's unfrozen)
            for recording in _active.RECORDINGS.here():
                mode = getattr(recording, "_mode", None)
                if mode is not None and mode.events is (self._run and self._run.events):
                    self._turned = mode.turned_on
        _ranklog.note(
            "ddp_ready",
            rank=rank,
            find_unused=bool(getattr(ddp, "find_unused_parameters", False)),
            line=_json_line(line),
        )

    # -- forward ----------------------------------------------------------------------------

    def _called(self, module: torch.nn.Module, _args: Any) -> None:
        """A sub-module is called inside a DDP forward: note the line of its first call."""
        if not self._inside:
            return
        state = self._inside[-1]
        name = state.modules.get(id(module))
        if name is None or not name:
            return
        state.called.add(name)
        if name in state.call_lines:
            return
        line = _user_line(sys._getframe(1))
        state.call_lines[name] = line
        _ranklog.note("call", rank=state.rank, module=name, line=_json_line(line))

    def _after_forward(self, ddp: Any, state: _Wrapped, out: Any) -> None:
        """The parameters this forward's output does not reach (DDP's own search when
        ``find_unused_parameters=True``), noted per forward."""
        state.forwards += 1
        called, state.called = state.called, set()
        if torch.is_grad_enabled():
            state.synced = bool(getattr(ddp, "require_backward_grad_sync", True))
            state.backward_since = False
        try:
            reached, opaque = _reached(out)
            unused = [
                name
                for name, param in ddp.module.named_parameters()
                if name in state.ids
                and name not in state.ignored
                and state.ids[name] not in state.frozen
                and param.requires_grad
                and id(param) not in reached
                # a custom Function (a reentrant checkpoint) hides what it ran: a module
                # called inside it reaches the output although the walk cannot see it
                and not (opaque and name.rpartition(".")[0] in called)
            ]
        except Exception:  # noqa: BLE001  (a note lost, never the user's forward)
            return
        if unused or state.forwards <= _MAX_NOTES:
            _ranklog.note("forward", rank=state.rank, step=state.forwards, unused=unused)

    # -- the end-of-run comparison (GP412) --------------------------------------------------

    def _compare_all(self) -> None:
        if _ranklog.active() is None:
            # Only when every rank records (gradprobe diagnose): a record() block on some
            # ranks only would wait in the all-reduce for ranks that never join it.
            return
        for ddp, state in list(self._models.items()):
            if state.compared or state.failed:
                continue
            state.compared = True
            try:
                self._found.extend(self._compare(ddp, state))
            except Exception:  # noqa: BLE001, S112  (a rank gone, a group destroyed)
                continue

    def _compare(self, ddp: Any, state: _Wrapped) -> list[Finding]:
        """The checksums of every rank through the process group's own store (NOTE [gloo
        work tensors]): parameters whose checksums differ between ranks are not the same
        on every rank."""
        import torch.distributed as dist

        store_of = getattr(dist.distributed_c10d, "_get_default_store", None)
        if not dist.is_initialized() or store_of is None:
            return []
        current = dict(ddp.module.named_parameters())
        added = [name for name in current if name not in state.ids]
        values: list[float] = []
        with torch.no_grad():
            for name in state.order:
                values.extend(_checksum(current.get(name)))
            slots = [0.0] * (2 * _SLOTS)
            for name in added:
                slot = zlib.crc32(name.encode()) % _SLOTS
                first, second = _checksum(current[name])
                slots[2 * slot] += first
                slots[2 * slot + 1] += second
            values.extend(slots)
        ranks = dist.get_process_group_ranks(state.group or dist.group.WORLD)
        store = store_of()
        key = f"gradprobe/checksums/{state.serial}/"
        store.set(key + str(dist.get_rank()), json.dumps(values))
        store.wait([key + str(rank) for rank in ranks], _WAIT)
        theirs = [json.loads(store.get(key + str(rank))) for rank in ranks]
        differs = [len({repr(other[i]) for other in theirs}) > 1 for i in range(len(values))]
        diverged = [
            name
            for index, name in enumerate(state.order)
            if differs[2 * index] or differs[2 * index + 1]
        ]
        base = 2 * len(state.order)
        diverged += [
            name
            for name in added
            if differs[base + 2 * (zlib.crc32(name.encode()) % _SLOTS)]
            or differs[base + 2 * (zlib.crc32(name.encode()) % _SLOTS) + 1]
        ]
        return _unsynchronised(state, current, diverged, self._run, self._turned)


def _finite(value: Any) -> bool:
    if not isinstance(value, torch.Tensor) or not value.is_floating_point():
        return True
    with torch.no_grad():
        return bool(torch.isfinite(value.detach()).all())


def _checksum(param: torch.Tensor | None) -> tuple[float, float]:
    if param is None:
        return (0.0, 0.0)
    values = param.detach().double()
    return (float(values.sum()), float((values * values).sum()))


def _reached(out: Any) -> tuple[set[int], bool]:
    """ids of the leaf tensors the autograd graph of ``out`` reaches, and whether the
    graph holds a custom Function's node (its backward may use tensors the walk cannot
    see, as a reentrant checkpoint's does)."""
    roots: list[Any] = []
    pending = [out]
    while pending:
        item = pending.pop()
        if isinstance(item, torch.Tensor):
            if item.grad_fn is not None:
                roots.append(item.grad_fn)
        elif isinstance(item, (list, tuple)):
            pending.extend(item)
        elif isinstance(item, Mapping):
            pending.extend(item.values())
    reached: set[int] = set()
    seen: set[int] = set()
    opaque = False
    while roots:
        node = roots.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        variable = getattr(node, "variable", None)
        if isinstance(variable, torch.Tensor):
            reached.add(id(variable))
        elif isinstance(node, torch.autograd.function.BackwardCFunction):
            opaque = True
        roots.extend(next_node for next_node, _ in node.next_functions)
    return reached, opaque


def _unsynchronised(
    state: _Wrapped,
    current: Mapping[str, torch.Tensor],
    diverged: Sequence[str],
    run: Run | None,
    turned: Any,
) -> list[Finding]:
    lines = run.events.parameter_lines if run is not None else {}
    groups: dict[tuple[str, SourceLine | None], list[str]] = {}
    for name in diverged:
        param = current.get(name)
        taken = state.ids.get(name)
        if param is None:
            continue
        key: tuple[str, SourceLine | None]
        if taken is None:
            key = ("added to the model after DistributedDataParallel(...) wrapped it", None)
            key = (key[0], lines.get(id(param)))
        elif taken != id(param):
            key = ("put in place of the wrapped parameter after DDP was built", None)
            key = (key[0], lines.get(id(param)))
        elif taken in state.frozen:
            key = ("frozen (requires_grad=False) when DDP was built, unfrozen after", None)
            on = turned.get(param) if turned is not None else None
            key = (key[0], on[1] if on is not None else None)
        elif name in state.ignored:
            key = ("excluded from DDP (parameters and buffers to ignore)", state.line)
        else:
            continue  # DDP synchronised its gradient; something else set it per rank
        groups.setdefault(key, []).append(name)
    found = []
    for (why, line), names in groups.items():
        cause = line or state.line
        found.append(
            make_finding(
                "GP412",
                message=(
                    f"{len(names)} parameter{'s' if len(names) != 1 else ''} differ across "
                    f"ranks at the end of the run: {', '.join(names[:8])}"
                    + (" ..." if len(names) > 8 else "")
                    + f". They were {why}"
                    + (f" (at {_where(line)})" if line is not None else "")
                    + ", so DDP never all-reduces their gradients: each rank trains its own "
                    f"copy. DDP was built at {_where(state.line)}."
                ),
                parameter=names[0],
                locations=_locations((cause, "cause"), (state.line, "created")),
                details={"parameters": names, "reason": why},
            )
        )
    return found


# -- across ranks ----------------------------------------------------------------------------


def across_ranks(notes: Mapping[int, Sequence[Mapping[str, Any]]]) -> list[Finding]:
    """Findings that need every rank's notes (rank -> its :mod:`gradprobe._ranklog`
    entries): GP413, GP411, GP415, in that order."""
    found = _models_differ(notes)
    found.extend(_unused_somewhere(notes))
    found.extend(_born_on_one_rank(notes))
    return found


def _born_on_one_rank(notes: Mapping[int, Sequence[Mapping[str, Any]]]) -> list[Finding]:
    """GP414: gradients became non-finite on every rank at once (the all-reduce), and the
    loss was non-finite before that on some ranks only: it was born there."""
    grads = {rank: _first(entries, "nonfinite_grads") for rank, entries in notes.items()}
    losses = {rank: _first(entries, "nonfinite_loss") for rank, entries in notes.items()}
    stepped = [int(entry["backward"]) for entry in grads.values() if entry is not None]
    if len(notes) < 2 or not stepped:
        return []
    first = min(stepped)
    born = {
        rank: entry
        for rank, entry in losses.items()
        if entry is not None and int(entry["backward"]) <= first
    }
    clean = sorted(rank for rank in notes if rank not in born)
    if not born or not clean:
        return []
    rank, entry = min(born.items())
    line = _line(entry.get("line"))
    op = entry.get("op")
    made = f" by {op}" if op else ""
    step = grads[rank] or {}
    return [
        make_finding(
            "GP414",
            message=(
                f"The first NaN/infinity of the run was made on {_ranks_text(born)}"
                + (f"{made} at {_where(line)}" if line is not None else "")
                + f", in iteration {entry['backward']}: the loss was not finite there and "
                f"finite on {_ranks_text(clean)}. DistributedDataParallel's gradient "
                f"all-reduce then gave every rank non-finite gradients, so the optimizer "
                f"step at {_where(_line(step.get('line')))} spread it to every rank's "
                "weights; the other ranks' own traces start there, not at its origin."
            ),
            locations=_locations((line, "cause"), (_line(step.get("line")), "read")),
            details={"born_on": sorted(born), "received_on": clean, "ranks": sorted(notes)},
        )
    ]


def _line(value: Any) -> SourceLine | None:
    if isinstance(value, list) and len(value) == 3:
        return (str(value[0]), int(value[1]), str(value[2]))
    return None


def _first(entries: Sequence[Mapping[str, Any]], kind: str) -> Mapping[str, Any] | None:
    return next((entry for entry in entries if entry.get("kind") == kind), None)


def _ranks_text(ranks: Iterable[int]) -> str:
    ranks = sorted(ranks)
    return ("rank " if len(ranks) == 1 else "ranks ") + ", ".join(map(str, ranks))


def _models_differ(notes: Mapping[int, Sequence[Mapping[str, Any]]]) -> list[Finding]:
    """GP413: the ranks handed DDP models with different parameters. DDP compares them in
    order, so each rank's list is aligned with the longest one (by shape and the line
    that made each parameter): what one rank has and another lacks, or holds in another
    shape, is named, with the lines that made it."""
    built = {rank: _first(entries, "ddp_init") for rank, entries in notes.items()}
    models = {rank: entry for rank, entry in built.items() if entry is not None}
    if len(models) < 2:
        return []
    params = {
        rank: [(str(p[0]), tuple(p[1]), _line(p[3])) for p in entry.get("params", [])]
        for rank, entry in models.items()
    }
    reference = max(sorted(params), key=lambda rank: len(params[rank]))
    ours = params[reference]
    differing: list[str] = []
    causes: list[SourceLine] = []
    for rank in sorted(params):
        theirs = params[rank]
        if rank == reference or theirs == ours:
            continue
        matcher = difflib.SequenceMatcher(
            None, [p[1:] for p in ours], [p[1:] for p in theirs], autojunk=False
        )
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                continue
            for name, shape, line in ours[i1:i2]:
                other = ", ".join(f"{n} {_shape(s)}" for n, s, _ in theirs[j1:j2])
                differing.append(
                    f"{name} {_shape(shape)} on rank {reference}, "
                    + (f"{other} on rank {rank}" if other else f"none on rank {rank}")
                )
                if line is not None and line not in causes:
                    causes.append(line)
            if i1 == i2:
                for name, shape, line in theirs[j1:j2]:
                    differing.append(f"{name} {_shape(shape)} on rank {rank} only")
                    if line is not None and line not in causes:
                        causes.append(line)
    if not differing:
        return []
    counts = ", ".join(f"rank {rank} has {len(params[rank])}" for rank in sorted(params))
    ddp_line = _line(models[reference].get("line"))
    branch = _branch(causes[0]) if causes else None
    return [
        make_finding(
            "GP413",
            message=(
                f"The ranks built different models before DistributedDataParallel(...) at "
                f"{_where(ddp_line)} ({counts} parameters): "
                f"{'; '.join(differing[:6])}{' ...' if len(differing) > 6 else ''}. DDP "
                "needs the same parameters, in the same order and shapes, on every rank."
            ),
            parameter=differing[0].split(" ", 1)[0],
            locations=_locations(
                (branch, "cause"), *((line, "cause") for line in causes[:2]), (ddp_line, "error")
            ),
            details={"differing": differing, "ranks": sorted(params)},
        )
    ]


def _shape(shape: Sequence[int]) -> str:
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def _unused_somewhere(notes: Mapping[int, Sequence[Mapping[str, Any]]]) -> list[Finding]:
    """GP411 (unused on some ranks, used on others) and GP415 (find_unused_parameters=True
    where nothing was ever unused)."""
    ready = {rank: _first(entries, "ddp_ready") for rank, entries in notes.items()}
    ranks = sorted(rank for rank, entry in ready.items() if entry is not None)
    if not ranks:
        return []
    unused_at: dict[str, dict[int, int]] = {}  # name -> rank -> first forward
    forwards: dict[int, int] = {}
    calls: dict[str, SourceLine] = {}
    for rank in ranks:
        for entry in notes[rank]:
            kind = entry.get("kind")
            if kind == "forward":
                forwards[rank] = max(forwards.get(rank, 0), int(entry.get("step", 0)))
                for name in entry.get("unused", []):
                    unused_at.setdefault(str(name), {}).setdefault(rank, int(entry["step"]))
            elif kind == "call":
                line = _line(entry.get("line"))
                if line is not None:
                    calls.setdefault(str(entry.get("module")), line)
    first = ready[ranks[0]] or {}
    find_unused = bool(first.get("find_unused"))
    ddp_line = _line(first.get("line"))
    found: list[Finding] = []
    if not unused_at:
        if find_unused and all(forwards.get(rank, 0) >= 2 for rank in ranks):
            found.append(
                make_finding(
                    "GP415",
                    message=(
                        f"DistributedDataParallel(..., find_unused_parameters=True) at "
                        f"{_where(ddp_line)}: in {min(forwards.values())} forwards on "
                        f"{_ranks_text(ranks)} every parameter was used, yet DDP searched "
                        "the autograd graph for unused ones after each forward."
                    ),
                    locations=_locations((ddp_line, "cause")),
                    details={"forwards": forwards},
                )
            )
        return found
    groups: dict[tuple[tuple[int, ...], str], list[str]] = {}
    for name, where in unused_at.items():
        idle = tuple(sorted(where))
        if len(idle) == len(ranks) and not find_unused:
            continue  # unused everywhere: GP107 says so, with the reason
        owner = name.rsplit(".", 1)[0] if "." in name else ""
        groups.setdefault((idle, owner), []).append(name)
    for (idle, owner), names in groups.items():
        used = [rank for rank in ranks if rank not in idle]
        step = min(unused_at[names[0]].values())
        call = calls.get(owner)
        branch = _branch(call) if call is not None else None
        if call is not None:
            skipped = f"the call {_text(call)} at {_where(call)} did not run"
            if branch is not None:
                skipped += f" (the branch {_text(branch)} at {_where(branch)} was not taken)"
        else:
            skipped = f"the module '{owner}' was not called" if owner else "they were not used"
        if used:
            story = (
                f"used on {_ranks_text(used)} but unused on {_ranks_text(idle)}: there, "
                f"{skipped} in forward {step}"
            )
        else:
            story = f"unused on every rank from forward {step}: {skipped}"
        consequence = (
            " find_unused_parameters=True keeps DDP quiet, but their gradient is averaged "
            "with zeros from the ranks that skipped them, and the ranks train different "
            "networks."
            if find_unused and used
            else " find_unused_parameters=True keeps DDP quiet about it; they never train."
            if find_unused
            else " DDP waits for their gradients and stops at the next forward with "
            "'Expected to have finished reduction in the prior iteration'."
        )
        found.append(
            make_finding(
                "GP411",
                message=(
                    f"{len(names)} parameter{'s' if len(names) != 1 else ''} "
                    f"({', '.join(names[:8])}{' ...' if len(names) > 8 else ''}) {story}."
                    + consequence
                ),
                parameter=names[0],
                module=owner or None,
                locations=_locations((branch, "cause"), (call, "cause"), (ddp_line, "created")),
                details={
                    "parameters": names,
                    "unused_on": list(idle),
                    "used_on": used,
                    "find_unused_parameters": find_unused,
                    "ranks": list(idle),
                },
            )
        )
    return found


def _text(line: SourceLine) -> str:
    text = linecache.getline(line[0], line[1]).strip()
    return f"`{text}`" if text else "here"


def _branch(call: SourceLine) -> SourceLine | None:
    """The ``if`` (or loop) whose body holds the call at ``call``, innermost first."""
    filename, number, function = call
    try:
        tree = ast.parse("".join(linecache.getlines(filename)))
    except (SyntaxError, ValueError):
        return None
    best: ast.stmt | None = None
    for node in ast.walk(tree):
        if not isinstance(node, (ast.If, ast.For, ast.While)):
            continue
        for body in (node.body, node.orelse):
            inside = body and body[0].lineno <= number <= (body[-1].end_lineno or body[-1].lineno)
            if inside and (best is None or node.lineno > best.lineno):
                best = node
    return None if best is None else (filename, best.lineno, function)


def _made_shape(parameter: torch.Tensor) -> list[int]:
    """The parameter's shape; none yet for a lazy layer's (reading it raises, and DDP itself
    refuses such a model with its own error, which must reach the user unchanged)."""
    if isinstance(parameter, torch.nn.parameter.UninitializedParameter):
        return []
    return list(parameter.shape)
