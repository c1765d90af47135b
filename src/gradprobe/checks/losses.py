"""Losses: what a loss function is given — probabilities where it wants logits, an (N, 1)
output against an (N,) target, a target that carries gradients, a policy-gradient weight
still attached to the critic."""

from __future__ import annotations

from collections.abc import Iterable

from gradprobe import _blame
from gradprobe._losses import broadcast_losses, squashed_losses
from gradprobe.checks._api import Check, Run, register
from gradprobe.findings import Finding

__all__ = ["BroadcastTarget", "GradTarget", "ProbabilitiesToLogitLoss", "WeightedLogProb"]


@register
class GradTarget(Check):
    """A loss target that requires grad (GP118)."""

    name = "gradprobe.losses.grad_target"
    codes = ("GP118",)

    def conclude(self, run: Run) -> Iterable[Finding]:
        return _blame._grad_targets(run.events)


@register
class WeightedLogProb(Check):
    """Log-probabilities weighted by a value that carries the critic's graph (GP123)."""

    name = "gradprobe.losses.weighted_log_prob"
    codes = ("GP123",)

    def conclude(self, run: Run) -> Iterable[Finding]:
        return _blame._weighted_log_probs(run.events)


@register
class ProbabilitiesToLogitLoss(Check):
    """softmax fed to cross_entropy/nll_loss, sigmoid to BCE-with-logits (GP133)."""

    name = "gradprobe.losses.probabilities_to_logit_loss"
    codes = ("GP133",)
    reads_modules = True

    def conclude(self, run: Run) -> Iterable[Finding]:
        return squashed_losses(run.events, list(run.modules))


@register
class BroadcastTarget(Check):
    """An elementwise loss that broadcasts (N, 1) against (N,) (GP135)."""

    name = "gradprobe.losses.broadcast_target"
    codes = ("GP135",)

    def conclude(self, run: Run) -> Iterable[Finding]:
        return broadcast_losses(run.events)
