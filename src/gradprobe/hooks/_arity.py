"""GP308: a full backward (pre) hook returned a tuple of the wrong length.

torch's message ("Backward hook returned an invalid number of grad_input, got 3, but
expected 1") names neither the hook nor the module. The usual cause is the legacy
``register_backward_hook`` layout: on ``nn.Linear`` that hook saw three entries (bias,
input and weight gradients), while a full hook's ``grad_input`` holds one entry per
positional input of ``forward``. The raising frame in ``torch/utils/hooks.py`` still holds
the hook and the module; this reads them from the traceback.
"""

from __future__ import annotations

from collections.abc import Callable
from types import TracebackType
from typing import Any

import torch

from gradprobe._compat import HOOK_ARITY_ERROR
from gradprobe.errors import error_text
from gradprobe.findings import Finding, Location, make_finding
from gradprobe.hooks._names import WRAPPED_ATTR

__all__ = ["wrong_arity"]

# what the legacy hook's three-entry grad_input held, by module type
_LEGACY: dict[type, str] = {
    torch.nn.Linear: "the bias, input and transposed weight gradients",
    torch.nn.Conv1d: "the input, weight and bias gradients",
    torch.nn.Conv2d: "the input, weight and bias gradients",
    torch.nn.Conv3d: "the input, weight and bias gradients",
}

_ARITY = HOOK_ARITY_ERROR


def wrong_arity(
    error: BaseException,
    where: Callable[[Any], Any],
    locate: Callable[[Any, Any], Location | None],
) -> list[Finding]:
    """GP308 for a failed backward whose error is torch's hook-arity message.
    ``where(function)`` gives a function's return line, ``locate`` turns it into a
    Location."""
    match = _ARITY.search(error_text(error))
    if match is None:
        return []
    pre, slot, got, expected = match[1] is not None, match[2], int(match[3]), int(match[4])
    hook, module = _raising_hook(error.__traceback__, pre)
    hook = getattr(hook, WRAPPED_ATTR, hook)  # gradprobe's own recording wrapper
    name = getattr(hook, "__name__", None) or type(hook).__name__ if hook is not None else None
    owner = type(module).__name__ if module is not None else "the module"
    kind = "full backward pre-hook" if pre else "full backward hook"
    what = f"{kind} {name!r}" if name else f"a {kind}"
    legacy = (
        f" {got} entries is the layout of the legacy register_backward_hook on {owner} "
        f"({_LEGACY[type(module)]}); a full hook's grad_input never holds parameter "
        "gradients."
        if not pre and got == 3 and type(module) in _LEGACY
        else ""
    )
    message = (
        f"The {what} on {owner} returned {got} values for grad_{slot}, but {owner}'s "
        f"grad_{slot} has {expected} (one per "
        f"{'output' if pre else 'positional input of forward'}), so backward() stopped."
        f"{legacy} Return a tuple as long as the grad_{slot} it was given (None where "
        "there is no gradient), or None to leave it unchanged."
    )
    cause = locate(where(hook), "cause") if hook is not None else None
    return [
        make_finding(
            "GP308",
            message=message,
            module=type(module).__name__ if module is not None else None,
            locations=[cause] if cause is not None else [],
            details={"returned": got, "expected": expected, "slot": f"grad_{slot}"},
        )
    ]


def _raising_hook(tb: TracebackType | None, pre: bool) -> tuple[Any, Any]:
    """The user hook and module held by the innermost frame of torch's BackwardHook."""
    found: tuple[Any, Any] = (None, None)
    while tb is not None:
        frame = tb.tb_frame
        if frame.f_code.co_filename.replace("\\", "/").endswith("torch/utils/hooks.py"):
            local = frame.f_locals
            hook = local.get("user_pre_hook" if pre else "hook")
            owner = getattr(local.get("self"), "module", None)
            if callable(hook) and owner is not None:
                found = (hook, owner)
        tb = tb.tb_next
    return found
