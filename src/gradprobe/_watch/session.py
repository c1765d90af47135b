"""``watch(model)``: statistics and numerical checks for every step of a training loop.

Mechanism (chosen because it survives real networks, see TORCH-FACTS Q2, Q5, Q11):

* a **forward hook** on each watched module records its outputs (any tensors in a tensor,
  tuple, list or dict) and registers a **node pre-hook** on each output's ``grad_fn`` for
  the gradient flowing into that output. No full backward hooks: their
  ``BackwardHookFunction`` wrapper makes every following in-place op (``ReLU(inplace=True)``)
  fail, and a node pre-hook registered inside the forward hook stays on the node that
  produced the value even when a later in-place op rebases the tensor;
* a **tensor hook** on each watched parameter records its gradient (and still fires on a
  compiled model watched after its first call, where dynamo ignores new module hooks);
* optimizer step pre/post hooks measure the update ratio when an optimizer is given.

Hooks compute 0-d statistic tensors on the tensor's device and append them to the
current :class:`~gradprobe._watch._step.StepBuffer`; nothing waits for the device until a
report, ``history``, ``findings()``, an export or ``close()`` copies everything once.
"""

from __future__ import annotations

import contextlib
import functools
import sys
import warnings
import weakref
from collections.abc import Callable, Sequence
from types import FrameType, TracebackType
from typing import TYPE_CHECKING, Any

import torch
from torch import Tensor, nn

from gradprobe import _deepfree, _inputs
from gradprobe._nosync import HostSyncError, hook_body
from gradprobe._source import is_user_file
from gradprobe._tracebacks import user_traceback
from gradprobe._watch import _histograms, _options, _stats
from gradprobe._watch._options import ModuleSelector, StepOn, find_tensors
from gradprobe._watch._params import WatchedParameters
from gradprobe._watch._results import Results, View
from gradprobe._watch._step import OUTPUT, PARAMETER, Names, StepBuffer
from gradprobe._watch.records import StepRecord
from gradprobe.errors import (
    GradprobeTypeError,
    GradprobeValueError,
    GradprobeWarning,
    WatchSessionClosed,
    describe,
    error_text,
)
from gradprobe.findings import Finding

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderResult
    from typing_extensions import Self

    from gradprobe._watch._gather import RankedWatch

__all__ = ["ModuleSelector", "StepOn", "WatchSession", "WatchSessionClosed", "watch"]

# A free cascade through Python-touched nodes overflows the C stack at ~25k nodes (see
# gradprobe._deepfree); holding every 500th node we touch keeps any cascade short.
_PROTECT_EVERY = _deepfree.BAND // 2
_STRIDED = torch.strided
_aminmax = torch.aminmax
_finite_probe = _stats.finite_probe
_SILENT_FORWARD = (
    "gradients arrived but no forward hook of a watched module ever fired: the model was "
    "probably compiled (torch.compile) and run before watch() started, and dynamo ignores "
    "hooks added after the first compiled call. Parameter gradients are recorded, and each "
    "backward pass counts as a step; activations and forward NaN checks are not. Enter "
    "watch() before the first compiled call."
)


_ROOT_NEVER_CALLED = (
    "the watched model's own forward never ran: its submodules were called directly "
    "(a container such as a GAN holding G and D), so no step ever ended and everything so "
    "far is one step. Pass step_on='manual' and call session.step() once per iteration, "
    "or step_on='optimizer' with the optimizer whose step ends an iteration."
)


def _graph_task_id() -> int:
    return -1


_task_id: Callable[[], int] = getattr(torch._C, "_current_graph_task_id", _graph_task_id)


def watch(
    model: nn.Module,
    *,
    optimizer: torch.optim.Optimizer | None = None,
    modules: ModuleSelector | Sequence[ModuleSelector] | None = None,
    sample_every: int = 20,
    history: int = 100,
    step_on: StepOn = "forward",
    exploding: float = 1e4,
    vanishing: float = 1e-7,
    dead_relu: float = 0.5,
    histograms: bool = False,
) -> WatchSession:
    """Watch ``model``'s activations and gradients, step by step, until closed.

    Use it as a context manager, or keep the session and call ``close()``::

        with gradprobe.watch(model, optimizer=opt) as session:
            for x, y in batches:
                opt.zero_grad()
                loss_fn(model(x), y).backward()
                opt.step()
        session.report()

    **Steps.** With ``step_on="forward"`` (default) every top-level call of ``model``
    starts a new step, evaluation forwards under ``torch.no_grad()`` included; the
    backward and optimizer step that follow belong to it. ``"optimizer"`` ends a step
    when ``optimizer.step()`` returns (gradient accumulation over several forwards is one
    step); ``"manual"`` ends it when you call :meth:`WatchSession.step`. Steps count from 0.

    **Every step** checks every floating-point output of the watched modules and every
    gradient flowing into those outputs or into the watched parameters for NaN/Inf (one
    sum per tensor, which a NaN or an infinity makes non-finite), and records which
    parameters got no gradient. **Sampled steps** (``step % sample_every == 0``, default
    every 20th, so step 0 is always sampled) add min and max, mean, std, fraction of zeros
    and NaN/Inf counts of activations, L2 norm and mean |g| of gradients, update ratios,
    and dead-ReLU tracking.

    Args:
        model: the module to watch (a ``torch.compile`` wrapper is unwrapped for names).
        optimizer: enables update ratios ``‖Δp‖ / ‖p‖`` on sampled steps.
        modules: which modules get forward statistics: glob patterns on qualified names
            (``"layer1.*"``) and/or module types; default: every module without children
            plus every module owning parameters directly (``nn.MultiheadAttention``).
            Parameters watched are those owned directly by the watched modules.
        sample_every: full statistics every this many steps (1 = every step).
        history: how many recent steps ``session.history`` keeps.
        step_on: what ends a step, see above.
        exploding: a parameter gradient L2 norm above this is reported (GP203).
        vanishing: a parameter gradient L2 norm below this is reported (GP204).
        dead_relu: report a ReLU when at least this fraction of its units never fired (GP205).
        histograms: on sampled steps, also keep histograms of each watched parameter and
            of its gradient, for :meth:`WatchSession.to_tensorboard`.

    Returns:
        The open :class:`WatchSession`.

    Raises:
        GradprobeTypeError, GradprobeValueError: an argument is unusable; the message says why.
    """
    return WatchSession(
        model,
        optimizer=optimizer,
        modules=modules,
        sample_every=sample_every,
        history=history,
        step_on=step_on,
        exploding=exploding,
        vanishing=vanishing,
        dead_relu=dead_relu,
        histograms=histograms,
    )


class WatchSession:
    """An open (then closed) watch over one model; see :func:`watch`.

    Results stay readable after :meth:`close` as plain data: :attr:`history`,
    :meth:`findings`, :meth:`report`, :meth:`to_json`, :meth:`gradient_flow`.
    ``print(session)`` (``str``) is the report as plain text as wide as the terminal (80 in
    a pipe); :meth:`report` prints it with rich. A session is always true, open or closed,
    with or without findings: ask ``session.findings()``.

    Example:
        >>> import torch
        >>> from gradprobe._watch import watch
        >>> model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.ReLU())
        >>> with watch(model) as session:
        ...     model(torch.randn(4, 3)).sum().backward()
        >>> [record.label for record in session.history[0].activations]
        ['(input)', '0', '1']
        >>> session
        <WatchSession closed: 1 step, 2 modules, 2 parameters>
    """

    def __init__(
        self,
        model: nn.Module,
        *,
        optimizer: torch.optim.Optimizer | None = None,
        modules: ModuleSelector | Sequence[ModuleSelector] | None = None,
        sample_every: int = 20,
        history: int = 100,
        step_on: StepOn = "forward",
        exploding: float = 1e4,
        vanishing: float = 1e-7,
        dead_relu: float = 0.5,
        histograms: bool = False,
    ) -> None:
        _options.check_options(model, optimizer, sample_every, history, step_on)
        self._thresholds = _options.check_thresholds(exploding, vanishing, dead_relu)
        self._sample_every = sample_every
        self._history_len = history
        self._step_on: StepOn = step_on
        inner = _options.unwrap(model)
        chosen = _options.select(inner, modules)
        self._model_type = type(inner).__name__
        param_names, param_owner = _options.parameters(inner, chosen)
        # One pseudo-module after the watched ones: the model's input (step_on="forward").
        self._input = len(chosen)
        self._names = Names(
            modules=(*(name for name, _ in chosen), "(input)"),
            types=(*(type(module).__name__ for _, module in chosen), "input"),
            parameters=tuple(param_names),
        )
        self._param_owner = tuple(param_owner)
        self._relu = (*(isinstance(module, _options.RELU_TYPES) for _, module in chosen), False)
        self._pass_through = (
            *(type(module) in _options.PASS_THROUGH for _, module in chosen),
            False,
        )
        self._closed = False
        self._buffer: StepBuffer | None = None
        self._steps = 0
        self._depth = 0
        self._forward_calls = 0
        self._root_calls = 0
        self._backward_passes = 0
        self._dirty = True
        self._results = Results(
            self._names,
            self._thresholds,
            _options.forward_sources(chosen),
            sample_every,
            history,
        )
        self._scratch = _stats.Scratch()
        self._notes: list[str] = []
        self._warned = False
        self._view: View | None = None
        self._tensorboard: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()
        self._before: tuple[list[int], list[Tensor], list[Tensor]] | None = None
        self._handles: list[Any] = []
        self._release_requests: Callable[[], Any] = lambda: None
        self._node_handles: list[Any] = []
        self._prune_at = 1024
        self._params = WatchedParameters(inner, param_names)
        self._histograms = _histograms.start(histograms, self._names.parameters, history)
        self._optimizer_ref = None if optimizer is None else weakref.ref(optimizer)
        try:
            _inputs.acquire()
            # Released by close(), or when a session nobody closed is collected.
            self._release_requests = weakref.finalize(self, _inputs.release)
            self._install(model, chosen, optimizer)
        except BaseException:
            self._remove_hooks()
            raise

    # -- installation and removal ------------------------------------------------------------

    def _install(
        self,
        model: nn.Module,
        chosen: Sequence[tuple[str, nn.Module]],
        optimizer: torch.optim.Optimizer | None,
    ) -> None:
        eager = _eager_only()
        if self._step_on == "forward":
            self._handles.append(model.register_forward_pre_hook(eager(self._root_pre_hook)))
            self._handles.append(
                model.register_forward_hook(eager(self._root_post_hook), always_call=True)
            )
        for index, (_, module) in enumerate(chosen):
            hook = eager(functools.partial(self._forward_hook, index))
            self._handles.append(module.register_forward_hook(hook))
        self._params.hook(self._param_hook, self._handles)
        if optimizer is not None:
            self._handles.append(optimizer.register_step_pre_hook(self._optimizer_pre_hook))
            self._handles.append(optimizer.register_step_post_hook(self._optimizer_post_hook))

    def _remove_hooks(self) -> None:
        self._release_requests()
        for handle in (*self._handles, *self._node_handles):
            with contextlib.suppress(Exception):
                handle.remove()
        self._handles.clear()
        self._node_handles.clear()
        self._params.unhook()

    def close(self) -> None:
        """Remove every hook, finish the current step and copy all results to the host.

        Idempotent. Afterwards the session holds no tensor, module or optimizer, and its
        results stay readable.
        """
        if self._closed:
            return
        self._closed = True
        try:
            self._remove_hooks()
        finally:
            try:
                self._end_step()
                self._view = self._snapshot(final=True)
            except HostSyncError:
                raise
            except Exception as error:  # noqa: BLE001 - close() must not mask the user's error
                self._notes.append(f"results could not be collected at close: {error!r}")
                self._view = View.empty()
            finally:
                self._release_device_state()

    def _release_device_state(self) -> None:
        self._buffer = None
        self._results.release_device_state()
        self._scratch.clear()
        self._before = None
        self._params.release()
        if self._histograms is not None:
            self._histograms.release()
        self._optimizer_ref = None

    def __enter__(self) -> Self:
        if self._closed:
            msg = "this watch session is closed; start a new one with gradprobe.watch(model)."
            raise WatchSessionClosed(msg)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc is not None:  # it goes on with the frames it would have without the hooks
            user_traceback(exc)
        self.close()

    # -- steps -----------------------------------------------------------------------------

    @property
    def open(self) -> bool:
        """True until :meth:`close`."""
        return not self._closed

    @property
    def steps(self) -> int:
        """How many steps have begun (the current step's number is ``steps - 1``)."""
        return self._steps

    @property
    def notes(self) -> tuple[str, ...]:
        """Things watch could not do (statistics it had to skip, hooks that never fired)."""
        notes = tuple(self._notes)
        if self._backward_passes and not self._forward_calls:
            notes = (*notes, _SILENT_FORWARD)
        elif self._step_on == "forward" and self._backward_passes > 1 and not self._root_calls:
            notes = (*notes, _ROOT_NEVER_CALLED)
        return notes

    def step(self) -> None:
        """End the current step (``step_on="manual"`` only); the next activity starts the
        next one. A step with no activity still counts, so numbers follow your calls.

        Raises:
            WatchSessionClosed: the session is closed.
            GradprobeValueError: the session counts steps some other way.
        """
        if self._closed:
            msg = "session.step() on a closed watch session; start a new one with watch(model)."
            raise WatchSessionClosed(msg)
        if self._step_on != "manual":
            msg = (
                f"session.step() only ends steps with watch(..., step_on='manual'); this "
                f"session uses step_on={self._step_on!r}, where steps end by themselves."
            )
            raise GradprobeValueError(msg)
        if self._buffer is None:
            self._begin()
        self._end_step()

    def _begin(self) -> StepBuffer:
        number = self._steps
        self._steps += 1
        step = StepBuffer(number, number % self._sample_every == 0, len(self._names.modules))
        self._buffer = step
        self._dirty = True
        return step

    def _end_step(self) -> None:
        step = self._buffer
        if step is None:
            return
        self._buffer = None
        self._before = None
        self._results.add(step, self._params.without_grad(step))
        if len(self._node_handles) > self._prune_at:
            # Handles of graphs that died; amortized, since one step can hook many outputs.
            self._node_handles = [h for h in self._node_handles if h.hooks_dict_ref() is not None]
            self._prune_at = max(1024, 2 * len(self._node_handles))
        self._dirty = True

    def _backward_step(self) -> StepBuffer:
        step = self._buffer if self._buffer is not None else self._begin()
        task = _task_id()
        if task != step.task:
            if (
                step.backwards
                and self._forward_calls
                and not self._root_calls
                and self._step_on == "forward"
                and not self._warned
            ):
                self._warned = True
                warnings.warn(_ROOT_NEVER_CALLED, GradprobeWarning, stacklevel=_user_level())
            if step.backwards and not self._forward_calls and self._step_on == "forward":
                # Forward hooks never fired (a model compiled before watch): each backward
                # pass is a step.
                self._end_step()
                step = self._begin()
                if not self._warned:
                    self._warned = True
                    warnings.warn(_SILENT_FORWARD, GradprobeWarning, stacklevel=_user_level())
            step.task = task
            step.backwards += 1
            inputs = _inputs.innermost()
            if inputs is None:
                step.whole = True
            else:  # backward(inputs=...) / autograd.grad: the others get nothing on purpose
                index = self._params.index
                step.requested.update(index[id(t)] for t in inputs if id(t) in index)
            self._backward_passes += 1
        return step

    # -- hooks -----------------------------------------------------------------------------

    @hook_body
    def _root_pre_hook(self, module: nn.Module, args: Any) -> None:
        if self._closed:
            return
        self._root_calls += 1
        if self._depth == 0:
            try:
                self._end_step()
                step = self._begin()
                step.grad_enabled = torch.is_grad_enabled()
                inputs = args[0] if isinstance(args, tuple) and len(args) == 1 else args
                for path, tensor in find_tensors(inputs, "", 0):
                    self._record_output(step, self._input, 0, path, tensor, grads=False)
            except HostSyncError:
                raise
            except Exception as error:  # noqa: BLE001 - never break the user's forward
                self._failed("the start of a step", error)
        self._depth += 1

    @hook_body
    def _root_post_hook(self, module: nn.Module, args: Any, output: Any) -> None:
        if self._depth > 0:
            self._depth -= 1

    @hook_body
    def _forward_hook(self, index: int, module: nn.Module, args: Any, output: Any) -> None:
        if self._closed:
            return
        try:
            step = self._buffer if self._buffer is not None else self._begin()
            self._forward_calls += 1
            self._dirty = True
            if not step.grad_enabled and torch.is_grad_enabled():
                step.grad_enabled = True
            call = step.calls[index]
            step.calls[index] = call + 1
            if isinstance(output, Tensor):
                self._record_output(step, index, call, "", output)
            else:
                for path, tensor in find_tensors(output, "", 0):
                    self._record_output(step, index, call, path, tensor)
        except HostSyncError:
            raise
        except Exception as error:  # noqa: BLE001 - never break the user's step
            self._failed(f"forward statistics of {self._names.modules[index]!r}", error)

    def _record_output(
        self,
        step: StepBuffer,
        index: int,
        call: int,
        path: str,
        tensor: Tensor,
        grads: bool = True,
    ) -> None:
        if not tensor.is_floating_point() or tensor.layout is not _STRIDED:
            return
        data = tensor.detach()
        if not data.numel():
            return
        # A NaN/Inf cannot start in a pass-through module's forward: between sampled steps
        # its output needs no check. The gradient into its output still does: a NaN from
        # the loss is first seen there, and skipping it blamed the module itself.
        if step.sampled or not self._pass_through[index]:
            step.fwd_keys.append((index, call, path))
            step.fwd_meta.append((data.shape, data.dtype))
            _check(step, step.fwd_mm, data)
        if step.sampled:
            step.fwd_sums.extend(_stats.activation_sums(data))
            step.fwd_counts.extend(_stats.activation_counts(data, self._scratch.like(data)))
            if self._relu[index]:
                self._results.track_relu(index, data)
        if grads and tensor.requires_grad:
            node = tensor.grad_fn
            if node is not None:
                hook = functools.partial(
                    self._output_grad_hook, tensor.output_nr, (OUTPUT, index, call, path)
                )
                self._node_handles.append(node.register_prehook(hook))
                step.touched += 1
                if step.touched % _PROTECT_EVERY == 0:
                    _deepfree.protect((node,))

    @hook_body
    def _output_grad_hook(
        self, position: int, key: tuple[int, int, int, str], grad_outputs: Sequence[Tensor | None]
    ) -> None:
        if self._closed:
            return
        grad = grad_outputs[position] if position < len(grad_outputs) else None
        if grad is None:
            return
        try:
            self._record_grad(self._backward_step(), key, grad)
        except HostSyncError:
            raise
        except Exception as error:  # noqa: BLE001 - never break the user's step
            self._failed(f"output gradient statistics of {self._names.modules[key[1]]!r}", error)

    @hook_body
    def _param_hook(self, index: int, grad: Tensor) -> None:
        if self._closed:
            return
        try:
            step = self._backward_step()
            step.seen.add(index)
            self._record_grad(step, self._params.keys[index], grad)
        except HostSyncError:
            raise
        except Exception as error:  # noqa: BLE001 - never break the user's step
            self._failed(f"gradient statistics of {self._names.parameters[index]!r}", error)

    def _record_grad(self, step: StepBuffer, key: tuple[int, int, int, str], grad: Tensor) -> None:
        if not grad.is_floating_point() or grad.layout is not _STRIDED:
            return
        if grad.requires_grad:  # only under backward(create_graph=True)
            grad = grad.detach()
        if not grad.numel():
            return
        self._dirty = True
        step.bwd_keys.append(key)
        step.bwd_meta.append((grad.shape, grad.dtype))
        _check(step, step.bwd_mm, grad)
        if step.sampled:
            norm = _stats.grad_norm(grad)
            step.bwd_norms.append(norm)
            if key[0] == PARAMETER:
                step.pnorms.append(norm)
                step.pl1.append(_stats.grad_l1(grad, self._scratch.like(grad)))
                step.pnorm_pos.append(key[1])
                if self._histograms is not None:
                    self._histograms.add(step.number, key[1], self._params.refs[key[1]](), grad)

    @hook_body
    def _optimizer_pre_hook(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        if self._closed:
            return
        step = self._buffer
        if step is None and self._step_on != "forward":  # opt.step(closure): the step starts
            step = self._begin()
        if step is None or not step.sampled:
            return
        indices: list[int] = []
        params: list[Tensor] = []
        for group in optimizer.param_groups:
            for param in group["params"]:
                index = self._params.index.get(id(param))
                if index is not None and param.grad is not None:
                    indices.append(index)
                    params.append(param)
        if params:
            self._before = (indices, params, [p.detach().clone() for p in params])

    @hook_body
    def _optimizer_post_hook(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        if self._closed:
            return
        before, self._before = self._before, None
        step = self._buffer
        if before is not None and step is not None:
            indices, params, copies = before
            sizes = [torch.linalg.vector_norm(c) for c in copies]
            # In place on our own copies: torch.dist and p - c are 3-10x slower on CPU.
            moved = [
                torch.linalg.vector_norm(c.sub_(p.detach()))
                for p, c in zip(params, copies, strict=True)
            ]
            step.upd = _stats.stack(moved) / _stats.stack(sizes).to(moved[0].device)
            step.upd_index = indices
            self._dirty = True
        if self._step_on == "optimizer":
            if self._buffer is None:
                self._begin()
            self._end_step()

    def _failed(self, what: str, error: Exception) -> None:
        self._notes.append(f"{what} skipped: {type(error).__name__}: {error_text(error)}")
        if not self._warned:
            self._warned = True
            warnings.warn(
                f"gradprobe.watch could not record {what}: {error!r}; see session.notes.",
                GradprobeWarning,
                stacklevel=2,
            )

    # -- results ---------------------------------------------------------------------------

    def _snapshot(self, final: bool = False) -> View:
        """Copy everything to the host (one transfer per device) and build the view."""
        if self._view is not None and not self._dirty:
            return self._view
        running = None
        if self._buffer is not None and not final:
            running = self._buffer.compact(self._params.without_grad(self._buffer), finished=False)
        self._view = self._results.snapshot(running)
        self._dirty = running is not None
        return self._view

    @property
    def history(self) -> tuple[StepRecord, ...]:
        """The last ``history`` steps, oldest first; the last may still be running
        (``finished=False``). Copies pending statistics to the host (one sync)."""
        return self._snapshot().records

    def findings(self) -> list[Finding]:
        """What watch found so far (GP201-GP205, GP107), most severe first."""
        return self._findings_of(self._snapshot())

    def _findings_of(self, view: View) -> list[Finding]:
        return self._results.findings(view)

    def gradient_flow(self) -> list[tuple[str, float, float]]:
        """``(parameter, mean |grad|, max |grad|)`` in model order, from the latest sampled
        step that had a backward pass; parameters without a gradient there are left out.

        Example:
            >>> import torch
            >>> from gradprobe._watch import watch
            >>> model = torch.nn.Linear(2, 1)
            >>> with torch.no_grad():
            ...     _ = model.weight.fill_(1.0)
            >>> with watch(model) as session:
            ...     model(torch.tensor([[1.0, -3.0]])).sum().backward()
            >>> session.gradient_flow()
            [('weight', 2.0, 3.0), ('bias', 1.0, 1.0)]
        """
        return self._flow_of(self.history)

    def _flow_of(self, records: Sequence[StepRecord]) -> list[tuple[str, float, float]]:
        return self._results.gradient_flow(records)

    def gather(self, dst: int = 0, group: Any = None) -> RankedWatch | None:
        """Every rank's results merged on rank ``dst`` of ``group`` (default: the world).

        A collective, like ``torch.distributed.gather_object``: call it on every rank of
        the group, at the same point (after training, before ``destroy_process_group()``).
        Rank ``dst`` gets a :class:`~gradprobe._watch._gather.RankedWatch` (findings once,
        with their ranks; gradient norms side by side; uneven step counts named), the
        others ``None``. A closed session can be gathered too.
        """
        from gradprobe._watch._gather import gather_sessions

        return gather_sessions(self, dst, group)

    def to_dict(self) -> dict[str, Any]:
        """Everything as JSON-ready data: options, findings, history, gradient flow."""
        from gradprobe._watch._export import session_dict

        return session_dict(self)

    def to_json(self, *, indent: int | None = 2) -> str:
        """:meth:`to_dict` as JSON text (non-finite numbers as ``"nan"``/``"inf"`` strings)."""
        import json

        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    def to_tensorboard(self, writer: Any, *, prefix: str = "gradprobe") -> int:
        """Write the history as scalars with ``writer.add_scalar(tag, value, step)``, and
        with ``watch(..., histograms=True)`` the histograms with ``add_histogram_raw``.

        Any object with those methods works (``torch.utils.tensorboard.SummaryWriter``,
        needs the ``tensorboard`` package). Steps already written to the same writer are
        skipped. Returns how many scalars and histograms were written.
        """
        from gradprobe._watch._export import write_scalars

        return write_scalars(self, writer, prefix, self._tensorboard)

    def report(self, console: Console | None = None) -> None:
        """Print findings and the latest statistics (worst first) with rich, to
        ``console`` (a ``rich.console.Console``) or a new one on stdout."""
        from rich.console import Console

        given: object = console
        if given is not None and not isinstance(given, Console):
            msg = (
                f"session.report(console=...) takes a rich.console.Console, got "
                f"{describe(given)}; e.g. report(console=Console(width=100)), or print(session) "
                "for plain text."
            )
            raise GradprobeTypeError(msg)
        (console or Console()).print(self)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        from gradprobe.render.watch import watch_report

        yield watch_report(self._report_data())

    def __str__(self) -> str:
        from gradprobe.render.watch import watch_text

        return str(watch_text(self._report_data()))

    def _repr_html_(self) -> str:
        """The report as HTML, for notebooks: findings, then the statistics tables."""
        from gradprobe.render.html_report import to_html
        from gradprobe.render.watch import watch_report

        return to_html(watch_report(self._report_data()))

    def _report_data(self) -> Any:
        from gradprobe.render.watch import ReportData

        view = self._snapshot()
        return ReportData(
            model=self._model_type,
            state="open" if self.open else "closed",
            steps=self._steps,
            sample_every=self._sample_every,
            records=view.records,
            findings=tuple(self._findings_of(view)),
            notes=self.notes,
        )

    def options(self) -> dict[str, Any]:
        """The options this session was opened with (JSON-ready)."""
        return {
            "model": self._model_type,
            "modules": list(self._names.modules[: self._input]),
            "parameters": list(self._names.parameters),
            "sample_every": self._sample_every,
            "history": self._history_len,
            "step_on": self._step_on,
            "exploding": self._thresholds.exploding,
            "vanishing": self._thresholds.vanishing,
            "dead_relu": self._thresholds.dead_relu,
            "histograms": self._histograms is not None,
        }

    def __repr__(self) -> str:
        steps = f"{self._steps} step" + ("" if self._steps == 1 else "s")
        return (
            f"<WatchSession {'closed' if self._closed else 'open'}: {steps}, "
            f"{self._input} modules, {len(self._names.parameters)} parameters>"
        )


# -- helpers -------------------------------------------------------------------------------


def _eager_only() -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Wrap forward-path hooks so dynamo runs them eagerly instead of tracing them.

    Only when dynamo is already imported (creating any optimizer imports it); importing it
    ourselves would cost a second. Otherwise a later ``torch.compile`` traces the hooks and
    breaks the graph at ``grad_fn``, which also works.
    """
    dynamo = sys.modules.get("torch._dynamo")
    disable = getattr(dynamo, "disable", None)
    if disable is None:
        return lambda fn: fn
    return lambda fn: disable(fn, recursive=True)


def _user_level() -> int:
    """The stacklevel of the user's line (their backward() call) for a warning raised in a
    hook, so the warning points at their code, not at gradprobe's or torch's."""
    frame: FrameType | None = sys._getframe(2)
    level = 2
    while frame is not None and not is_user_file(frame.f_code.co_filename):
        frame, level = frame.f_back, level + 1
    return level if frame is not None else 2


def _check(step: StepBuffer, into: list[Tensor], data: Tensor) -> None:
    """The NaN/Inf check of one tensor, as the pair FirstNonFinite folds: min and max on
    sampled steps, the sum twice between them (one pass, see _stats.finite_probe)."""
    if step.sampled:
        into.extend(_aminmax(data))
    else:
        total = _finite_probe(data)
        into.append(total)
        into.append(total)
