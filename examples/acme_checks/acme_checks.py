"""A third-party gradprobe check: optimizer steps that cannot move anything.

An optimizer whose every step ran with a learning rate of 0 (``lr=0`` left from a sweep, a
warm-up schedule that never leaves 0, ``lr=args.lr`` with ``--lr`` unset) trains nothing,
and nothing fails. Installed, this module is found through the ``gradprobe.checks``
entry-point group (see docs/checks.md); the package's ``pyproject.toml`` says::

    [project.entry-points."gradprobe.checks"]
    zero_lr = "acme_checks:ZeroLearningRate"
"""

from __future__ import annotations

from gradprobe import Code, make_finding
from gradprobe.checks import Check, Run, StepCall, location


class ZeroLearningRate(Check):
    """ACME101: every step of an optimizer ran with a learning rate of 0."""

    name = "acme.zero_learning_rate"
    codes = ("ACME101",)
    new_codes = (
        Code(
            "ACME101",
            "zero_learning_rate",
            "every optimizer step ran with a learning rate of 0",
            "The optimizer stepped, but each step had lr == 0 in every parameter group, so "
            "no parameter moved.",
            "Set the learning rate (or check the schedule that sets it) before training.",
            "https://example.com/acme-checks#acme101",
        ),
    )

    def __init__(self) -> None:
        # One instance per recording, so this state is the recording's own:
        # id(optimizer) -> [steps, steps with lr 0, where the optimizer was built]
        self.steps: dict[int, list] = {}

    def on_step(self, step: StepCall) -> None:
        seen = self.steps.setdefault(id(step.optimizer), [0, 0, step.created])
        seen[0] += 1
        if all(group["lr"] == 0 for group in step.optimizer.param_groups):
            seen[1] += 1

    def conclude(self, run: Run) -> list:
        return [
            make_finding(
                "ACME101",
                message=f"All {steps} steps of the optimizer built here ran with lr == 0.",
                locations=[loc for loc in [location(created, "cause")] if loc],
                details={"steps": steps},
            )
            for steps, zero, created in self.steps.values()
            if steps and zero == steps
        ]
