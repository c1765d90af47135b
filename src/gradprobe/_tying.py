"""GP130: weight tying that made a copy (``nn.Parameter(embed.weight.clone())``).

Language models tie their output projection to the input embedding. Assigning the
parameter ties them; wrapping a clone in a new ``nn.Parameter`` makes a second leaf that
starts equal and drifts away as soon as the optimizer steps, with no error anywhere. The
recorder notes every parameter built from ``.clone()`` of another parameter; this names
the ones whose two sides are in the same model, both trained, and now differ.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

import torch

from gradprobe._blame import _top_modules, location
from gradprobe._recorder import Events, SourceLine
from gradprobe.findings import Finding, make_finding

__all__ = ["copied_ties"]


def copied_ties(events: Events, modules: Sequence[torch.nn.Module]) -> list[Finding]:
    """GP130 for parameters cloned from another parameter of the same model that an
    optimizer then trained apart from it."""
    if not events.parameter_copies:
        return []
    found: list[Finding] = []
    for top in _top_modules(modules):
        named = {id(p): (n, p) for n, p in top.named_parameters(remove_duplicate=False)}
        for line, source_id, copy_id in events.parameter_copies:
            if source_id not in named or copy_id not in named:
                continue  # built from another model's weights: a transfer, not a tie
            (source_name, source), (copy_name, copy) = named[source_id], named[copy_id]
            if source is copy or source.shape != copy.shape:
                continue
            if not {source_id, copy_id} <= events.fed:
                continue  # one side frozen or never stepped: a reference copy (EMA, target)
            with torch.no_grad():
                if torch.equal(source, copy):
                    continue  # still equal: nothing went wrong in this run
            found.append(_finding(line, source_name, copy_name))
    return found[:3]


def _finding(line: SourceLine | None, source: str, copy: str) -> Finding:
    where = f"line {line[1]}" if line else "an unknown line"
    cause = location(line, "cause")
    target, original = _spelled(cause.text if cause else None) or (copy, source)
    return make_finding(
        "GP130",
        message=(
            f"{copy} was made at {where} as a copy of {source} (nn.Parameter of a .clone()): "
            "they are two parameters, each with its own gradient, and the optimizer has "
            "moved them apart, so they are no longer tied. To tie them, assign the "
            f"parameter itself ({target} = {original}); to keep two independent copies, "
            "build the new one from .detach().clone()."
        ),
        parameter=copy,
        locations=[cause] if cause else [],
        details={"parameter": copy, "copy_of": source},
    )


def _spelled(text: str | None) -> tuple[str, str] | None:
    """``("self.out.weight", "self.embed.weight")`` for the line
    ``self.out.weight = nn.Parameter(self.embed.weight.clone())``: the user's own words."""
    try:
        tree = ast.parse(text or "")
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
            continue
        for call in ast.walk(node.value):
            if (
                isinstance(call, ast.Call)
                and isinstance(call.func, ast.Attribute)
                and call.func.attr == "clone"
            ):
                return ast.unparse(node.targets[0]), ast.unparse(call.func.value)
    return None
