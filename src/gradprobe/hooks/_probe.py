"""The recorder probe for hooks: where hooks are registered, and what goes wrong with them.

While ``gradprobe.record()`` (and so ``gradprobe diagnose``) runs a script, this probe
patches the hook registration methods of ``nn.Module`` and the global
``register_module_*_hook`` functions, and remembers each registration as plain data: the
kind, the module (by the name the user's code knows it, ``model.fc (Linear)``), the
callable and the registering line. Backward hooks are swapped for thin wrappers (restored
in :meth:`HookProbe.stop`) that note what they receive, by shape only. From that it
reports:

- GP301 / GP302: every legacy ``register_backward_hook``, with the layout of ``grad_input``
  it really gets, read off the last autograd node of the module's forward (``AddmmBackward0``:
  bias grad, input grad, weight grad transposed); GP302 when that node is not the module's
  only operation (a composite module, ``nn.Linear`` on 3-D input);
- GP303: a full backward hook that got ``None`` in ``grad_input`` (no module input required
  grad) and reads it without checking for ``None`` (:mod:`._copes`); the hook line that
  failed on it is the cause only when the hook raised;
- GP304: ``module.forward(x)`` called directly on a module that has hooks (the call line);
- GP305: PyTorch's "Output 0 of BackwardHookFunction is a view and is being modified
  inplace" error, naming the hooked module whose input or output was modified, the
  in-place module (``created``) and the registering line (``cause``);
- GP306: a full backward hook on a module that returns a dict (never called).

Harmless hooks produce nothing. A finding's ``cause`` is the line to change: the
registration (or the ``.forward()`` call); other lines carry other roles.
"""

from __future__ import annotations

import contextlib
import functools
import sys
import warnings
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from types import FrameType, TracebackType
from typing import Any

import torch
import torch.nn.modules.module as torch_module
from torch.utils.hooks import BackwardHook

from gradprobe._compat import INPLACE_VIEW_ERROR
from gradprobe._nosync import hook_body
from gradprobe._patch import HookSwaps, Patches, SharedPatches
from gradprobe._source import is_user_file, traceback_location, user_frame
from gradprobe._threads import ThreadBound
from gradprobe.errors import error_text
from gradprobe.findings import Finding, Location, LocationRole, make_finding
from gradprobe.hooks._copes import copes_with_none
from gradprobe.hooks._inventory import HookKind
from gradprobe.hooks._names import (
    WRAPPED_ATTR,
    callable_name,
    find_module_name,
    frame_variables,
    in_internal,
    module_label,
)
from gradprobe.hooks._probe_data import (
    LegacyRecord,
    Line,
    Registration,
    identify_slot,
    legacy_finding,
    legacy_global_finding,
    line_of,
    location,
    shapes,
    user_frames,
)

__all__ = ["HookProbe", "Registration"]

_MODULE_METHODS: tuple[tuple[str, HookKind], ...] = (
    ("register_forward_pre_hook", "forward_pre"),
    ("register_forward_hook", "forward"),
    ("register_full_backward_pre_hook", "backward_pre"),
    ("register_full_backward_hook", "backward"),
    ("register_backward_hook", "backward_legacy"),
)
_GLOBAL_FUNCTIONS: tuple[tuple[str, HookKind], ...] = (
    ("register_module_forward_pre_hook", "global_forward_pre"),
    ("register_module_forward_hook", "global_forward"),
    ("register_module_full_backward_pre_hook", "global_backward_pre"),
    ("register_module_full_backward_hook", "global_backward"),
    ("register_module_backward_hook", "global_backward_legacy"),
)
_FULL_KINDS = frozenset(("backward", "backward_pre", "global_backward", "global_backward_pre"))
_MAX_TRACKED = 20_000  # wrapped tensors remembered for GP305 (weakly)


class HookProbe:
    """Records hook registrations while a script runs; reports GP301-GP306 findings.

    Example:
        >>> import torch
        >>> from gradprobe.hooks import HookProbe
        >>> probe = HookProbe()
        >>> probe.start()
        >>> layer = torch.nn.Linear(3, 2)
        >>> handle = layer.register_backward_hook(lambda m, gin, gout: None)
        >>> probe.stop()
        >>> [(f.code, f.cause is not None) for f in probe.findings(None)]
        [('GP301', True)]
    """

    def __init__(self) -> None:
        self.registrations: list[Registration] = []
        self._swaps = HookSwaps()
        self._active = False
        self._holder: Any = None  # where _PROBES holds this probe while it runs
        self._modules: dict[int, weakref.ref[torch.nn.Module]] = {}
        self._labels: dict[int, str] = {}
        self._roots: list[tuple[weakref.ref[torch.nn.Module], str]] = []
        self._root_cache: dict[int, dict[int, str]] = {}
        self._created: dict[int, Line | None] = {}
        self._legacy: dict[int, LegacyRecord] = {}
        self._direct_calls: OrderedDict[tuple[int, Line], None] = OrderedDict()
        self._dict_outputs: dict[int, str] = {}
        self._saw_none: dict[int, int] = {}  # registration index -> module id
        # registration index -> whether its hook copes with None (never reads grad_input,
        # or compares it with None): only a failure makes those worth a finding
        self._copes: dict[int, bool] = {}
        self._hook_errors: dict[int, tuple[int, str, Location | None]] = {}
        self._wrapped: OrderedDict[int, tuple[weakref.ref[torch.Tensor], int]] = OrderedDict()
        # registration index -> (the hook table's weak ref, the hook's key in it)
        self._handles: dict[int, tuple[Any, int]] = {}
        # (module id, kind, line) -> registration indexes, and the most of them attached
        # at once (seen at each registration, while the module is alive)
        self._stacked: dict[tuple[int, str, Line | None], list[int]] = {}
        self._stacked_max: dict[tuple[int, str, Line | None], int] = {}
        # backward hooks that return values made from grad_output: (return line, who)
        self._output_returns: list[tuple[Line, Registration]] = []

    # -- Probe protocol ---------------------------------------------------------------------

    def start(self) -> None:
        """Patch the registration methods, module construction and the hook machinery."""
        if self._active:
            return
        _SHARED.acquire()  # installed once per process (NOTE [shared patches])
        self._active = True
        self._holder = _PROBES.add(self)

    def stop(self) -> None:
        """Undo every patch and swap; idempotent; never raises."""
        if self._active:
            self._active = False
            with contextlib.suppress(Exception):
                _PROBES.remove(self._holder, self)
            with contextlib.suppress(Exception):
                _SHARED.release()
        with contextlib.suppress(Exception):
            self._swaps.restore()

    def findings(self, error: BaseException | None) -> list[Finding]:
        """GP301-GP306 findings for what was recorded; ``error`` is the escaped exception."""
        found: list[Finding] = []
        found.extend(self._legacy_findings())
        found.extend(self._none_findings(error))
        found.extend(self._direct_call_findings())
        if error is not None and INPLACE_VIEW_ERROR in error_text(error):
            found.extend(self._inplace_findings(error))
        found.extend(self._dict_findings())
        found.extend(self._repeated_findings())
        found.extend(self._output_return_findings())
        return found

    def legacy_nodes(self) -> dict[str, tuple[str, int]]:
        """module label -> the recorder's key of the node its legacy backward hook is
        attached to (the last node of its forward), for the modules that ran forward."""
        nodes: dict[str, tuple[str, int]] = {}
        for registration in self.registrations:
            record = self._legacy.get(registration.module_id or 0)
            if registration.kind != "backward_legacy" or not registration.module:
                continue
            if record is not None and record.key is not None:
                nodes.setdefault(registration.module, record.key)
        return nodes

    def _output_return_findings(self) -> Iterator[Finding]:
        """GP312: a module backward hook whose return value, which replaces grad_input, is
        built from grad_output."""
        for line, registration in self._output_returns[:1]:
            yield make_finding(
                "GP312",
                message=(
                    f"The backward hook {registration.hook!r}"
                    + (f" on {registration.module}" if registration.module else "")
                    + f" returns, at line {line[1]}, values built from grad_output. What a "
                    "module backward hook returns replaces grad_input, the gradient with "
                    "respect to the module's inputs, so every layer before it receives the "
                    "output gradient instead (no error when the shapes agree). Build the "
                    "return value from grad_input, or return None to leave it unchanged."
                ),
                module=registration.module,
                locations=[
                    loc
                    for loc in (location(line, "cause"), location(registration.line, "registered"))
                    if loc is not None
                ],
            )

    def _attached(self, index: int) -> bool:
        table_ref, ident = self._handles.get(index, (None, None))
        table = table_ref() if table_ref is not None else None
        return table is not None and ident in table

    def _repeated_findings(self) -> Iterator[Finding]:
        """GP310: one line registering hooks on the same module again and again, the
        earlier ones still attached."""
        for (module_id, kind, line), indexes in self._stacked.items():
            attached = self._stacked_max.get((module_id, kind, line), 0)
            if attached < 3 or line is None:
                continue
            group = [self.registrations[index] for index in indexes]
            module = group[0].module or "a module"
            yield make_finding(
                "GP310",
                message=(
                    f"The {kind} hook {group[0].hook!r} was registered on {module} "
                    f"{len(group)} times by the same line, and {attached} of them are still "
                    "attached: each call adds one more and all of them run, so what they "
                    "compute is counted once per registration. Register it once, or remove "
                    "the handle (handle.remove()) before registering again."
                ),
                module=group[0].module,
                locations=[loc for loc in (location(line, "cause"),) if loc is not None],
                details={"registrations": len(group), "attached": attached},
            )

    def _registered(
        self, module: torch.nn.Module | None, hook: Any, kind: HookKind, handle: Any
    ) -> None:
        frame = user_frame(3)
        label: str | None = None
        key: int | None = None
        if module is not None:
            key = id(module)
            label = self._label(module, frame)
            if key not in self._modules:
                self._modules[key] = weakref.ref(module)
            self._watch_forward(module)
        registration = Registration(
            index=len(self.registrations),
            kind=kind,
            module=label,
            module_id=key,
            hook=callable_name(hook),
            line=line_of(frame),
            composite=bool(module._modules) if module is not None else False,
        )
        self.registrations.append(registration)
        with contextlib.suppress(AttributeError):  # where it lives: is it still attached?
            self._handles[registration.index] = (handle.hooks_dict_ref, handle.id)
        if key is not None:  # how many from this line are attached right now
            group = self._stacked.setdefault((key, kind, registration.line), [])
            group.append(registration.index)
            if len(group) <= 64:
                attached = sum(1 for index in group if self._attached(index))
                self._stacked_max[(key, kind, registration.line)] = max(
                    attached, self._stacked_max.get((key, kind, registration.line), 0)
                )
        if kind in ("backward", "backward_legacy"):
            with contextlib.suppress(Exception):
                returned = _returns_grad_output(hook)
                if returned is not None and len(self._output_returns) < 10:
                    self._output_returns.append((returned, registration))
        if kind in ("backward", "backward_legacy", "global_backward", "global_backward_legacy"):
            table = handle.hooks_dict_ref()
            if table is not None and handle.id in table:
                wrapped = self._wrap_backward(table[handle.id], registration)
                self._swaps.swap(table, handle.id, wrapped)

    def _label(self, module: torch.nn.Module, frame: FrameType | None) -> str:
        key = id(module)
        known = self._labels.get(key)
        if known is not None:
            return known
        name = find_module_name(module, frame, self._root_cache)
        if name is not None and "." in name:
            var = name.split(".", 1)[0]
            values = dict(frame_variables(frame)) if frame is not None else {}
            root = values.get(var)
            if isinstance(root, torch.nn.Module) and all(r() is not root for r, _ in self._roots):
                self._roots.append((weakref.ref(root), var))
            del values, root
        label = module_label(module, name)
        self._labels[key] = label
        return label

    def _name_of(self, module: torch.nn.Module, frames: Sequence[FrameType] = ()) -> str:
        """A label for a module that was not registered on: its path under a model held
        by a variable of ``frames`` (outermost first), or under a root seen earlier."""
        known = self._labels.get(id(module))
        if known is not None:
            return known
        for frame in frames:
            name = find_module_name(module, frame, self._root_cache)
            if name is not None:
                return module_label(module, name)
        for ref, var in self._roots:
            root = ref()
            if root is None:
                continue
            for path, sub in root.named_modules():
                if sub is module:
                    return module_label(module, f"{var}.{path}" if path else var)
        return module_label(module, None)

    # -- wrappers ---------------------------------------------------------------------------

    def _wrap_backward(self, hook: Any, registration: Registration) -> Callable[..., Any]:
        probe = self
        legacy = registration.kind in ("backward_legacy", "global_backward_legacy")

        def recording(module: Any, grad_input: Any, grad_output: Any) -> Any:
            active = probe._active and probe in _PROBES.here()  # only its own threads
            if active:
                probe._note_backward(registration, legacy, module, grad_input, grad_output)
                if registration.index in probe._saw_none and not legacy:
                    probe._judge_none(registration.index, hook)
            try:
                return hook(module, grad_input, grad_output)
            except BaseException as error:
                if active and not legacy and registration.index in probe._saw_none:
                    where = traceback_location(error.__traceback__, "cause")
                    probe._hook_errors[id(error)] = (registration.index, error_text(error), where)
                raise

        recording.__name__ = getattr(hook, "__name__", "hook")
        recording.__qualname__ = getattr(hook, "__qualname__", recording.__name__)
        setattr(recording, WRAPPED_ATTR, hook)
        return recording

    @hook_body
    def _note_backward(
        self,
        registration: Registration,
        legacy: bool,
        module: Any,
        grad_input: Any,
        grad_output: Any,
    ) -> None:
        """What a backward hook received, by shape only (no tensor values are read)."""
        key = id(module)
        if legacy:
            record = self._legacy.setdefault(key, LegacyRecord())
            if record.received is None:
                record.received = shapes(grad_input)
                record.received_output = shapes(grad_output)
        elif grad_input and all(g is None for g in grad_input):
            self._saw_none.setdefault(registration.index, key)
            self._labels.setdefault(key, self._name_of(module))

    def _judge_none(self, index: int, hook: Any) -> None:
        if index not in self._copes:
            self._copes[index] = copes_with_none(hook)

    def _legacy_layout(self, module: torch.nn.Module, inputs: Any, grad_fn: Any) -> None:
        record = self._legacy.setdefault(id(module), LegacyRecord())
        args = inputs if isinstance(inputs, tuple) else (inputs,)
        tensors = [(i, t) for i, t in enumerate(args) if isinstance(t, torch.Tensor)]
        params = {id(p): name for name, p in module.named_parameters()}
        record.node = grad_fn.name()
        record.key = (record.node, grad_fn._sequence_nr())
        record.batched = any(t.dim() >= 2 for _, t in tensors)
        covered: set[int] = set()
        for child, _ in grad_fn.next_functions:
            role, label, which = identify_slot(child, tensors, params)
            record.slots.append((role, label))
            if which is not None:
                covered.add(which)
            if role == "intermediate":
                record.complete = False
        if any(t.requires_grad and i not in covered for i, t in tensors):
            record.complete = False

    def _wrapped_tensors(self, module: Any, args: Any, result: Any, outputs: bool) -> None:
        key = id(module)
        if outputs and not isinstance(args, (torch.Tensor, tuple)):
            self._dict_outputs.setdefault(key, type(args).__name__)
            self._labels.setdefault(key, self._name_of(module))
            self._modules.setdefault(key, weakref.ref(module))
            return
        values = result if isinstance(result, tuple) else (result,)
        for value in values:
            if isinstance(value, torch.Tensor):
                ident = id(value)
                self._wrapped[ident] = (weakref.ref(value), key)
                if len(self._wrapped) > _MAX_TRACKED:
                    self._wrapped.popitem(last=False)
        self._modules.setdefault(key, weakref.ref(module))

    # -- .forward() called directly ----------------------------------------------------------

    def _watch_forward(self, module: torch.nn.Module) -> None:
        _watch_forward(module)

    def _check_direct(self, module: torch.nn.Module, caller: FrameType) -> None:
        if not is_user_file(caller.f_code.co_filename):
            return  # called by torch's Module.__call__ (or other library code)
        code = caller.f_code
        if code.co_argcount and code.co_varnames[0] == "self":
            first = next(iter(frame_variables(caller)), (None, None))[1]
            if first is module:
                return  # super().forward(...) inside the module's own forward
        hooked = (
            module._forward_hooks
            or module._forward_pre_hooks
            or module._backward_hooks
            or module._backward_pre_hooks
        )
        if not hooked:
            return
        line = line_of(caller)
        if line is not None:
            self._direct_calls[(id(module), line)] = None

    # -- findings ---------------------------------------------------------------------------

    def _registrations_of(self, key: int | None, kinds: frozenset[str]) -> list[Registration]:
        return [r for r in self.registrations if r.module_id == key and r.kind in kinds]

    def _legacy_findings(self) -> Iterator[Finding]:
        seen: set[int | None] = set()
        for registration in self.registrations:
            if registration.kind == "global_backward_legacy":
                yield legacy_global_finding(registration)
                continue
            if registration.kind != "backward_legacy" or registration.module_id in seen:
                continue
            seen.add(registration.module_id)
            record = self._legacy.get(registration.module_id or 0, LegacyRecord())
            yield legacy_finding(registration, record)

    def _none_findings(self, error: BaseException | None) -> Iterator[Finding]:
        failed: tuple[int, str, Location | None] | None = None
        if error is not None:
            failed = self._hook_errors.get(id(error))
            if failed is not None and failed[1] != error_text(error):
                failed = None
        for index, key in self._saw_none.items():
            hook_failed = failed is not None and failed[0] == index
            if self._copes.get(index) and not hook_failed:
                continue  # it never reads grad_input, or checks it for None
            registration = self.registrations[index]
            module = registration.module or self._labels.get(key) or "a module"
            locations: list[Location] = []
            message = (
                f"The full backward hook {registration.hook!r} on {module} was called with "
                "grad_input containing None: no input of that module requires grad (typically "
                "the first layer, fed the data batch), and the hook reads grad_input without "
                "checking for None."
            )
            if hook_failed and failed is not None:
                message += f" The hook then failed: {failed[1]}"
                if failed[2] is not None:
                    locations.append(failed[2])
            where = location(registration.line, "registered")
            if where is not None:
                locations.append(where)
            yield make_finding(
                "GP303",
                message=message,
                module=module,
                locations=locations,
                details={"hook": registration.hook},
            )

    def _direct_call_findings(self) -> Iterator[Finding]:
        for key, line in self._direct_calls:
            module = self._labels.get(key, "a hooked module")
            hooks = [r for r in self.registrations if r.module_id == key]
            locations = [loc for loc in (location(line, "cause"),) if loc is not None]
            locations.extend(
                loc for r in hooks[:3] if (loc := location(r.line, "registered")) is not None
            )
            kinds = sorted({r.kind for r in hooks})
            yield make_finding(
                "GP304",
                message=(
                    f"{module}.forward(...) was called directly, so its "
                    f"{', '.join(kinds) or 'registered'} hooks did not run for that call."
                ),
                module=module,
                locations=locations,
                details={"hook_kinds": kinds},
            )

    def _inplace_findings(self, error: BaseException) -> Iterator[Finding]:
        hooked_key, inplace_module = self._blame_inplace(error.__traceback__)
        frames = user_frames(error.__traceback__)
        full = [r for r in self.registrations if r.kind in _FULL_KINDS]
        if hooked_key is None:
            module_ids = {r.module_id for r in full if r.module_id is not None}
            if len(module_ids) == 1:
                hooked_key = next(iter(module_ids))
        causes = self._registrations_of(hooked_key, _FULL_KINDS) if hooked_key else []
        if not causes:
            causes = [r for r in full if r.module_id is None]  # global full hooks
        hooked = self._labels.get(hooked_key or 0)
        if hooked is None and hooked_key is not None:
            ref = self._modules.get(hooked_key)
            module = ref() if ref is not None else None
            hooked = self._name_of(module, frames) if module is not None else None
        locations: list[Location] = []
        for registration in causes[:1]:
            where = location(registration.line, "cause")
            if where is not None:
                locations.append(where)
        inplace_label = None
        if inplace_module is not None:
            inplace_label = self._name_of(inplace_module, frames)
            created = location(self._created.get(id(inplace_module)), "created")
            if created is not None:
                locations.append(created)
        failed = traceback_location(error.__traceback__, "error")
        if failed is not None:
            locations.append(failed)
        subject = hooked or "a module with a full backward hook"
        names = ", ".join(dict.fromkeys(r.hook for r in causes)) or "a hook"
        if causes and all(r.module_id is None for r in causes):
            how = f"is covered by the global full backward hook {names} (every module has it)"
        else:
            how = f"has the full backward hook {names}"
        by = f"{inplace_label} then modified one" if inplace_label else "one was modified"
        if inplace_label == hooked:
            by = "it modified one"
        yield make_finding(
            "GP305",
            message=(
                f"{subject} {how}, so PyTorch wraps the module's input and output tensors in "
                f"BackwardHookFunction views; {by} in place, which PyTorch refuses ('Output 0 "
                "of BackwardHookFunction is a view and is being modified inplace')."
            ),
            hint=(
                "Instead of the full backward hook, register a forward hook that calls "
                "output.register_hook(...) (it receives the same output gradient and allows "
                "in-place ops), or make the in-place operation out of place "
                "(nn.ReLU(inplace=False), or clone the output first)."
            ),
            module=subject,
            locations=locations,
            details={"inplace_module": inplace_label},
        )

    def _blame_inplace(self, tb: TracebackType | None) -> tuple[int | None, torch.nn.Module | None]:
        """From the error's frames: the hooked module whose wrapped tensor was modified,
        and the module whose forward did the in-place write."""
        frames: list[FrameType] = []
        while tb is not None:
            frames.append(tb.tb_frame)
            tb = tb.tb_next
        hooked: int | None = None
        inplace: torch.nn.Module | None = None
        for frame in reversed(frames):  # innermost first
            variables = frame_variables(frame)
            owner = dict(variables).get("self")
            if inplace is None and isinstance(owner, torch.nn.Module):
                inplace = owner
            if hooked is None:
                for _, value in variables:
                    if isinstance(value, torch.Tensor):
                        entry = self._wrapped.get(id(value))
                        if entry is not None and entry[0]() is value:
                            hooked = entry[1]
                            break
            if hooked is not None and inplace is not None:
                break
        return hooked, inplace

    def _dict_findings(self) -> Iterator[Finding]:
        for key, kind in self._dict_outputs.items():
            module = self._labels.get(key, "a module")
            causes = self._registrations_of(key, _FULL_KINDS)
            role: LocationRole = "cause"
            if not causes:
                causes = [
                    r for r in self.registrations if r.kind in _FULL_KINDS and r.module_id is None
                ]
                role = "registered"  # a global hook: the model, not the line, is the issue
            locations = [loc for r in causes[:1] if (loc := location(r.line, role)) is not None]
            yield make_finding(
                "GP306",
                message=(
                    f"{module} returns a {kind}, so its full backward hooks were never called "
                    "(PyTorch only wraps a Tensor or a tuple of Tensors)."
                ),
                module=module,
                locations=locations,
                details={"output_type": kind},
            )


# -- the shared patches (NOTE [shared patches], NOTE [threads]) -----------------------------

# The probes started in each thread; the patches below serve only the calling thread's.
_PROBES: ThreadBound[HookProbe] = ThreadBound()
_FORWARDS: set[type] = set()  # classes whose forward is patched (in _SHARED)


def _install(patches: Patches) -> None:
    module_cls = torch.nn.Module
    patches.call(_FORWARDS.clear)
    for method, kind in _MODULE_METHODS:
        patches.set(module_cls, method, _method(getattr(module_cls, method), kind))
    for function, kind in _GLOBAL_FUNCTIONS:
        patches.set(torch_module, function, _global(getattr(torch_module, function), kind))
    patches.set(module_cls, "__init__", _init(module_cls.__init__))
    patches.set(
        module_cls,
        "_maybe_warn_non_full_backward_hook",
        _legacy_forward(module_cls._maybe_warn_non_full_backward_hook),
    )
    patches.set(BackwardHook, "setup_output_hook", _setup(BackwardHook.setup_output_hook, True))
    patches.set(BackwardHook, "setup_input_hook", _setup(BackwardHook.setup_input_hook, False))


_SHARED = SharedPatches(_install)


def _init(original: Callable[..., None]) -> Callable[..., None]:
    @functools.wraps(original)
    def __init__(self: torch.nn.Module, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        probes = _PROBES.here()
        if probes and not in_internal():
            key = id(self)
            line = line_of(user_frame(2))
            for probe in probes:
                probe._created[key] = line
                with contextlib.suppress(TypeError):
                    # drop the line when the module dies (ids are reused); nothing at exit
                    weakref.finalize(self, probe._created.pop, key, None).atexit = False

    return __init__


def _method(original: Callable[..., Any], kind: HookKind) -> Callable[..., Any]:
    @functools.wraps(original)
    def register(self: torch.nn.Module, hook: Any, *args: Any, **kwargs: Any) -> Any:
        handle = original(self, hook, *args, **kwargs)
        probes = _PROBES.here()
        if probes and not in_internal():
            for probe in probes:
                with contextlib.suppress(Exception):
                    probe._registered(self, hook, kind, handle)
        return handle

    return register


def _global(original: Callable[..., Any], kind: HookKind) -> Callable[..., Any]:
    @functools.wraps(original)
    def register(hook: Any, *args: Any, **kwargs: Any) -> Any:
        handle = original(hook, *args, **kwargs)
        probes = _PROBES.here()
        if probes and not in_internal():
            for probe in probes:
                with contextlib.suppress(Exception):
                    probe._registered(None, hook, kind, handle)
        return handle

    return register


def _legacy_forward(original: Callable[..., None]) -> Callable[..., None]:
    @functools.wraps(original)
    def check(self: torch.nn.Module, inputs: Any, result: Any, grad_fn: Any) -> None:
        probes = _PROBES.here()
        if probes and not in_internal():
            for probe in probes:
                record = probe._legacy.get(id(self))
                if record is None or record.node is None:
                    with contextlib.suppress(Exception):
                        probe._legacy_layout(self, inputs, grad_fn)
        _warn_from_caller(original, sys._getframe(1), self, inputs, result, grad_fn)

    return check


def _setup(original: Callable[..., Any], outputs: bool) -> Callable[..., Any]:
    @functools.wraps(original)
    def setup(self: BackwardHook, args: Any) -> Any:
        result = original(self, args)
        probes = _PROBES.here()
        if probes and not in_internal():
            for probe in probes:
                with contextlib.suppress(Exception):
                    probe._wrapped_tensors(self.module, args, result, outputs)
        return result

    return setup


def _watch_forward(module: torch.nn.Module) -> None:
    """Patch the class's own ``forward`` (once, in the shared set) to notice direct calls."""
    owner = next((k for k in type(module).__mro__ if "forward" in vars(k)), None)
    if owner is None or owner in _FORWARDS or owner is torch.nn.Module:
        return
    original = vars(owner)["forward"]
    if not callable(original):
        return

    @functools.wraps(original)
    def forward(self: torch.nn.Module, *args: Any, **kwargs: Any) -> Any:
        probes = _PROBES.here()
        # dynamo traces this wrapper inside a compiled model: skip the bookkeeping there
        # (its sys._getframe would make dynamo warn and break the graph)
        if probes and not torch.compiler.is_compiling():
            for probe in probes:
                if id(self) in probe._modules:
                    with contextlib.suppress(Exception):
                        probe._check_direct(self, sys._getframe(1))
        return original(self, *args, **kwargs)

    with _SHARED.locked():
        if _SHARED.installed and owner not in _FORWARDS:
            _FORWARDS.add(owner)
            _SHARED.patches.set(owner, "forward", forward)


def _warn_from_caller(original: Callable[..., None], caller: FrameType, *args: Any) -> None:
    """Call ``original`` and re-issue its warnings as if from ``caller``.

    torch warns with ``stacklevel=2``, which would now point at our wrapper; re-issuing
    from the real caller (torch's ``Module._call_impl``) keeps the user's warning output,
    filters and once-per-location registry exactly as without gradprobe.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        original(*args)
    for warning in caught:
        globals_ = caller.f_globals
        warnings.warn_explicit(
            warning.message,
            warning.category,
            caller.f_code.co_filename,
            caller.f_lineno,
            module=globals_.get("__name__"),
            registry=globals_.setdefault("__warningregistry__", {}),
            module_globals=globals_,
        )


def _returns_grad_output(hook: Any) -> Line | None:
    """The ``return`` of a module backward hook ``(module, grad_input, grad_output)`` whose
    value reads grad_output and not grad_input; None for any other hook."""
    import ast
    import inspect
    import textwrap

    code = getattr(inspect.unwrap(hook), "__code__", None)
    if code is None or code.co_argcount < 3 or not is_user_file(code.co_filename):
        return None
    names = code.co_varnames[:3]
    offset = 1 if names[0] == "self" else 0
    if code.co_argcount < 3 + offset:
        return None
    grad_input, grad_output = code.co_varnames[1 + offset], code.co_varnames[2 + offset]
    lines, start = inspect.getsourcelines(code)
    tree = ast.parse(textwrap.dedent("".join(lines)))
    for node in ast.walk(tree):
        if isinstance(node, ast.Return) and node.value is not None:
            read = {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)}
            if grad_output in read and grad_input not in read:
                return (code.co_filename, start + node.lineno - 1, code.co_name)
    return None
