"""GP136: ``requires_grad`` turned on after the forward pass had used the tensor.

Autograd records a graph as the ops run. A tensor that starts to require grad only after
the forward (``out = model(x); x.requires_grad_()``) is not in that graph, so backward never
reaches it and its ``.grad`` stays None. The recorder notes where each leaf's requires_grad
was turned on and, when a later ``.grad`` read finds None, whether the graph of the backward
since then was already being built before that line.
"""

from __future__ import annotations

from gradprobe._blame import _where, location
from gradprobe._recorder import Events, SourceLine
from gradprobe.findings import Finding, LocationRole, make_finding

__all__ = ["late_leaves"]


def late_leaves(events: Events) -> list[Finding]:
    found: list[Finding] = []
    for turned, read, backward, built in events.late_leaves[:3]:
        pairs: list[tuple[SourceLine | None, LocationRole]] = [
            (turned, "cause"),
            (built, "created"),
            (read, "read"),
        ]
        found.append(
            make_finding(
                "GP136",
                message=(
                    f"requires_grad was turned on at {_where(turned)}, after the forward pass "
                    f"that starts at {_where(built)} had already used the tensor: autograd "
                    "records the graph as ops run, so the graph that backward() at "
                    f"{_where(backward)} went through does not contain it, and its .grad read "
                    f"at {_where(read)} is None. Set requires_grad before the forward: "
                    "x.requires_grad_() before using x, or create it with "
                    "requires_grad=True."
                ),
                locations=[loc for line, role in pairs if (loc := location(line, role))],
            )
        )
    return found
