"""Backward has no side effects on state (invariant 7): a module that a backward runs again
(a checkpoint rebuilding the activations it did not keep) must leave the state as its
forward left it.

=====  ==================================================  ================================
code   what the rerun did                                   what it costs
=====  ==================================================  ================================
GP181  updated the module's buffers again (a BatchNorm      running statistics moved twice
       in train mode counts every batch twice)              per batch: evaluation uses
                                                            statistics of no real data
GP182  drew new random numbers from the running stream    gradients of other dropout
       (the forward's RNG state was not restored for the    masks than the loss used; the
       rerun)                                               RNG stream shifted by a forward
=====  ==================================================  ================================

The recorder notes each module run again while a backward runs, when the rerun moved a
buffer's version or advanced the default generator, and whether it started from the
generator's running stream or from a state restored for it
(:mod:`gradprobe._recorder.recompute`).
The line named is the user's ``torch.utils.checkpoint`` call that wrapped the module, or,
for a recomputation written by hand (a custom ``autograd.Function`` that calls the forward
again in its ``backward``), the user's line in that backward that ran it.

Silent for ``torch.utils.checkpoint`` with its default ``preserve_rng_state=True`` (the
rerun starts from the forward's saved state, inside a forked RNG), for checkpointed modules without buffers or with frozen ones (BatchNorm in
eval mode), and for random numbers drawn in backward hooks (gradient noise), which run no
module again. Only the default CPU generator is compared.
"""

from __future__ import annotations

from collections.abc import Iterable

from gradprobe._recorder import SourceLine
from gradprobe._recorder.events import Recomputation
from gradprobe.checks._api import Check, Run, register
from gradprobe.checks._common import _locations, _where
from gradprobe.findings import Finding, make_finding

__all__ = ["RecomputationSideEffects"]


@register
class RecomputationSideEffects(Check):
    """A module a backward ran again that changed buffers or drew other random numbers."""

    name = "gradprobe.recomputation.side_effects"
    codes = ("GP181", "GP182")

    def __init__(self) -> None:
        self.named: set[tuple[str, SourceLine]] = set()

    def conclude(self, run: Run) -> Iterable[Finding]:
        found: list[Finding] = []
        for rerun in run.events.recomputations:
            cause = _cause(rerun)
            if cause is None:
                continue
            if rerun.buffers and ("GP181", cause) not in self.named:
                self.named.add(("GP181", cause))
                found.append(_buffers_updated(rerun, cause))
            if rerun.drew and rerun.live and ("GP182", cause) not in self.named:
                self.named.add(("GP182", cause))
                found.append(_fresh_draws(rerun, cause))
        return found


def _cause(rerun: Recomputation) -> SourceLine | None:
    """The user's checkpoint call around the module, or the user's line inside the backward
    that ran it again (a recomputation by hand); None when torch's checkpoint ran it and
    its call was not seen (imported before the recording)."""
    if rerun.checkpoint is not None:
        return rerun.checkpoint
    if rerun.torch_checkpoint or not rerun.rerun:
        return None
    return rerun.rerun[0]


def _by(rerun: Recomputation, cause: SourceLine) -> str:
    if rerun.checkpoint is not None:
        return f"the checkpoint at {_where(cause)}"
    return f"{cause[2]}() at {_where(cause)}, which runs the forward again"


def _buffers_updated(rerun: Recomputation, cause: SourceLine) -> Finding:
    shown = ", ".join(rerun.buffers[:3]) + (
        f" and {len(rerun.buffers) - 3} more" if len(rerun.buffers) > 3 else ""
    )
    return make_finding(
        "GP181",
        message=(
            f"The backward() at {_where(rerun.backward)} ran {rerun.module} again for "
            f"{_by(rerun, cause)}, and the rerun updated its buffers ({shown}) a second "
            "time: in train mode a BatchNorm counts every batch twice, and its running "
            "statistics, the ones evaluation uses, move twice per step."
        ),
        locations=_locations((cause, "cause"), (rerun.backward, "read")),
        details={"module": rerun.module, "buffers": list(rerun.buffers)},
    )


def _fresh_draws(rerun: Recomputation, cause: SourceLine) -> Finding:
    by_torch = rerun.checkpoint is not None
    return make_finding(
        "GP182",
        message=(
            f"The backward() at {_where(rerun.backward)} ran {rerun.module} again for "
            f"{_by(rerun, cause)}, and the rerun drew new random numbers instead of the "
            "forward's: its dropout masks differ from the ones the loss was computed with, "
            "so the gradients belong to another network, and the random stream moved on "
            "by a whole extra forward."
        ),
        hint=(
            "Leave preserve_rng_state at its default (True), so the rerun replays the "
            "forward's random numbers."
            if by_torch
            else "Save the RNG state in forward (torch.get_rng_state()) and run the rerun "
            "inside torch.random.fork_rng() after torch.set_rng_state(saved), or use "
            "torch.utils.checkpoint, which does both."
        ),
        locations=_locations((cause, "cause"), (rerun.backward, "read")),
        details={"module": rerun.module, "rng_preserved": False},
    )
