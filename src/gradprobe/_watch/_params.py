"""The parameters a watch session watches, by index, held by weak reference only.

:meth:`WatchedParameters.hook` registers a gradient hook on each one that requires grad;
:meth:`WatchedParameters.unhook` puts back the ``None`` hooks dict that registering
replaced; :meth:`WatchedParameters.without_grad` tells which of them a step's backward
passes left without a gradient (GP107).
"""

from __future__ import annotations

import contextlib
import functools
import weakref
from collections.abc import Callable, Sequence
from typing import Any

from torch import Tensor, nn

from gradprobe._watch._step import PARAMETER, StepBuffer

__all__ = ["WatchedParameters"]


class WatchedParameters:
    """Weak references to the watched parameters (model order), their index by tensor id
    and their backward keys, and which of them got a gradient hook."""

    def __init__(self, root: nn.Module, names: Sequence[str]) -> None:
        self.refs: list[weakref.ref[Tensor]] = []
        self.index: dict[int, int] = {}
        self.hooked: set[int] = set()
        self.keys: list[tuple[int, int, int, str]] = []
        self._dict_was_none: list[int] = []  # parameters whose _backward_hooks was None
        params = dict(root.named_parameters())
        for index, name in enumerate(names):
            tensor = params[name]
            self.refs.append(weakref.ref(tensor))
            self.index[id(tensor)] = index
            self.keys.append((PARAMETER, index, 0, ""))

    def hook(self, hook: Callable[[int, Tensor], None], handles: list[Any]) -> None:
        """Register ``hook(index, grad)`` on each parameter that requires grad, appending
        every handle to ``handles`` at once, so a failure halfway leaves them removable."""
        for index, ref in enumerate(self.refs):
            tensor = ref()
            if tensor is None or not tensor.requires_grad:
                continue
            if tensor._backward_hooks is None:
                self._dict_was_none.append(index)
            hook_index = functools.partial(hook, index)
            handles.append(tensor.register_hook(hook_index))  # type: ignore[no-untyped-call]
            self.hooked.add(index)

    def unhook(self) -> None:
        """Once the hooks are removed: register_hook turned .grad hooks dicts from None into
        an OrderedDict; put back None where nothing else was registered meanwhile, so the
        tensors look untouched."""
        for index in self._dict_was_none:
            tensor = self.refs[index]()
            if tensor is not None and not tensor._backward_hooks:
                with contextlib.suppress(Exception):
                    tensor._backward_hooks = None
        self._dict_was_none = []

    def without_grad(self, step: StepBuffer) -> list[int]:
        """The parameters ``step``'s backward passes should have reached and did not."""
        if not step.seen:
            return []
        missing = []
        expected = self.hooked if step.whole else self.hooked & step.requested
        for index in sorted(expected - step.seen):
            tensor = self.refs[index]() if index < len(self.refs) else None
            if tensor is not None and tensor.requires_grad:
                missing.append(index)
        return missing

    def release(self) -> None:
        """Forget the tensors (at close); :attr:`hooked` and :attr:`keys` stay."""
        self.refs = []
        self.index = {}
