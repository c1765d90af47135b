"""One entry of the error catalogue, and the families the entries are grouped in."""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["FAMILIES", "Entry"]


@dataclass(frozen=True)
class Entry:
    """One torch error message and what gradprobe makes of it."""

    key: str  # the trigger script's name
    family: str
    pattern: str | re.Pattern[str]
    code: str
    message: str  # the start of torch's text, as shown in the docs
    names: str  # the line gradprobe names as the cause, in words
    roles: tuple[str, ...] = ("cause",)  # every role the finding's locations carry
    # entries explained in words (code GP168, :mod:`gradprobe.checks.unexplained`): what
    # torch's message means and what to change; the cause comes from the traceback's shape
    # ("raised") or from where the tensor the raising line names was made ("made")
    meaning: str = ""
    fix: str = ""
    blame: str = "raised"
    kind: str = "error"  # or "warning": torch warns it (GP169) and the run goes on

    def matches(self, text: str) -> bool:
        """Whether ``text`` (an exception's ``str``) is this entry's message."""
        if isinstance(self.pattern, str):
            return self.pattern in text
        return self.pattern.search(text) is not None


FAMILIES = (
    "engine",
    "views",
    "custom Function",
    "hooks",
    "autograd.grad",
    "checkpoint",
    "inference mode",
    "torch.func",
    "AMP",
    "DDP",
    "optimizer",
    "leaving autograd",
    "setting .grad",
    "forward-mode AD",
    "autograd.functional",
    "gradcheck",
)
