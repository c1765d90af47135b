"""A fixed table trained as a weight (GP173): an ``nn.Parameter`` whose values are a
formula of positions (a sinusoidal positional encoding: ``sin``/``cos`` of ``arange``), with
no random draw in what built it, that an optimizer then stepped with a gradient.

Invariant 4 of the training step: a step changes what it should, and nothing else. A table
meant to stay the formula belongs in a buffer (``register_buffer``); wrapped in
``nn.Parameter`` it is in ``model.parameters()``, so the optimizer, its weight decay
included, changes it at every step and it stops being the formula.

What the check reads: the parameters an optimizer stepped with a gradient (recorded), the
line each was created on (recorded), and that line's source (:mod:`._formula`). It is
silent when the source says training the table is meant: ``requires_grad=True`` written
out, or the Parameter made inside an ``if`` (a learnable/fixed switch); and for tables with
any random draw in their making (a learned embedding initialised at random, random Fourier
features).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from gradprobe._recorder import SourceLine
from gradprobe.checks._api import Check, Run, register
from gradprobe.checks._common import _locations, _top_modules, _where
from gradprobe.checks._formula import Made, parameter_made
from gradprobe.findings import Finding, make_finding

__all__ = ["FixedTableTrained"]

_POSITIONS = frozenset({"arange", "linspace", "range"})
_PERIODIC = frozenset({"sin", "cos"})
# any of these in the making means the values were drawn, not a formula of positions
_RANDOM = frozenset(
    {
        "rand",
        "randn",
        "randint",
        "randperm",
        "rand_like",
        "randn_like",
        "normal",
        "normal_",
        "uniform",
        "uniform_",
        "bernoulli",
        "random",
        "empty",
        "empty_like",
        "xavier_uniform_",
        "xavier_normal_",
        "kaiming_uniform_",
        "kaiming_normal_",
        "trunc_normal_",
        "orthogonal_",
        "load",
    }
)
_PARAMETERS = 512  # stepped parameters looked at


@register
class FixedTableTrained(Check):
    """A fixed table (a formula of positions) registered as a trainable ``nn.Parameter``
    that an optimizer steps (GP173)."""

    name = "gradprobe.fixed_tables.trained"
    codes = ("GP173",)
    reads_modules = True  # the table's name

    def conclude(self, run: Run) -> Iterable[Finding]:
        events = run.events
        made: dict[int, tuple[SourceLine, Made]] = {}
        for key in list(events.fed)[:_PARAMETERS]:
            line = events.parameter_lines.get(key)
            how = parameter_made(line) if line is not None else None
            if how is not None and _fixed(how):
                made[key] = (line, how)
        if not made:
            return []
        names, holders = _names_and_holders(run, set(made))
        found = []
        for key, (line, how) in made.items():
            if key in names:  # still a parameter of a model (not a freed one's id)
                built = events.optimizer_lines.get(holders.get(key, 0))
                found.append(_trained(names[key], line, how, built.line if built else None))
        return found[:3]


def _fixed(how: Made) -> bool:
    return (
        not how.explicit
        and not how.conditional
        and bool(how.calls & _POSITIONS)
        and bool(how.calls & _PERIODIC)
        and not how.calls & _RANDOM
    )


def _names_and_holders(run: Run, keys: set[int]) -> tuple[dict[int, str], dict[int, int]]:
    names: dict[int, str] = {}
    for top in _top_modules(run.modules):
        for name, param in top.named_parameters():
            if id(param) in keys and param.requires_grad:
                names.setdefault(id(param), name)
    holders: dict[int, int] = {}
    for optimizer in run.optimizers:
        for group in getattr(optimizer, "param_groups", ()):
            for param in group.get("params", ()):
                if id(param) in keys:
                    holders.setdefault(id(param), id(optimizer))
    return names, holders


def _trained(name: str, line: SourceLine, how: Made, built: Any) -> Finding:
    calls = ", ".join(sorted(how.calls & (_POSITIONS | _PERIODIC)))
    return make_finding(
        "GP173",
        message=(
            f"{name} is a fixed table, computed from positions ({calls}) with nothing "
            f"random, and {_where(line)} registers it as a trainable nn.Parameter: the "
            f"optimizer built at {_where(built)} holds it, and every step changes it, so it "
            "no longer is the formula it was built from."
        ),
        hint=(
            "Keep a fixed table out of the parameters: self.register_buffer(name, table) "
            "(it still moves with .to() and is saved in state_dict()). If training it is "
            "meant, write nn.Parameter(table, requires_grad=True)."
        ),
        locations=_locations((line, "cause"), (built, "read")),
        details={"parameter": name, "built_from": sorted(how.calls & (_POSITIONS | _PERIODIC))},
    )
