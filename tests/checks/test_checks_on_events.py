"""Built-in checks tested on hand-built events: no model runs, no script is written.

Each test fills the recorder's :class:`Events` the way a run with the mistake would, asks
one check through the runner, and reads the finding's code and lines; the silent twin of
each test (the same events without the mistake) must give nothing.
"""

from __future__ import annotations

import torch

from gradprobe._recorder import Backward, Events
from gradprobe._recorder.events import EmptyLoad, StepEvent, Typo
from gradprobe._recorder.events import LeafBackward as LeafBackwardEvent
from gradprobe.checks import Check, CheckRunner, OpCall, Run, StepCall
from gradprobe.checks.losses import BroadcastTarget
from gradprobe.checks.missing_gradients import FlatGradients, LeafBackward
from gradprobe.checks.parameters import EmptyLoads, FreezeTypos
from gradprobe.checks.protocol import StepProtocol
from gradprobe.findings import Finding

FILE = "/project/train.py"


def at(line: int) -> tuple[str, int, str]:
    return (FILE, line, "<module>")


def conclude(check: type[Check], events: Events) -> list[Finding]:
    return CheckRunner([check]).conclude(Run(events=events))


def lines(finding: Finding) -> list[tuple[str, int]]:
    return [(loc.role, loc.line) for loc in finding.locations]


def timeline(*kinds: tuple[str, int]) -> Events:
    """Events whose protocol timeline is ``kinds``: (kind, line) in order; each clipping is
    given one parameter that has a gradient, each step one."""
    events = Events()
    for order, (kind, line) in enumerate(kinds):
        events.protocol.append(StepEvent(order, kind, at(line), grads=1, given=1))
    return events


def protocol_codes(events: Events) -> list[tuple[str, list[tuple[str, int]]]]:
    return [(f.code, lines(f)) for f in conclude(StepProtocol, events)]


def test_gradients_not_zeroed_needs_two_stale_steps() -> None:
    def stale(order: int) -> StepEvent:
        return StepEvent(order, "stale", at(13), origin=at(12))

    events = timeline(("backward", 12), ("step", 13))
    events.protocol.append(stale(2))
    assert protocol_codes(events) == []  # one step on a sum is accumulation
    events.protocol.extend([StepEvent(3, "backward", at(12)), StepEvent(4, "step", at(13))])
    events.protocol.append(stale(5))
    (finding,) = conclude(StepProtocol, events)
    assert finding.code == "GP134"
    assert lines(finding) == [("cause", 12), ("read", 13)]
    assert finding.details["steps"] == 2


def test_zeroing_before_the_step_only_matters_in_a_training_loop() -> None:
    assert protocol_codes(timeline(("backward", 19), ("zero", 20))) == []
    found = protocol_codes(timeline(("backward", 19), ("zero", 20), ("step", 21)))
    assert found == [("GP110", [("cause", 20)])]


def test_zeroing_after_the_gradients_were_read_is_not_work_thrown_away() -> None:
    assert (
        protocol_codes(timeline(("backward", 19), ("read", 20), ("zero", 21), ("step", 22))) == []
    )
    # a read belongs to the backward before it: the next backward's gradients are unread
    found = protocol_codes(
        timeline(("backward", 19), ("read", 20), ("backward", 19), ("zero", 21), ("step", 22))
    )
    assert found == [("GP110", [("cause", 21)])]


def test_clipping_with_no_fresh_gradients_and_before_unscale() -> None:
    found = protocol_codes(timeline(("clip", 8), ("backward", 9), ("step", 10)))
    assert found == [("GP119", [("cause", 8)])]
    scaled = timeline(("scale", 28), ("backward", 29), ("clip", 30), ("step", 31))
    assert protocol_codes(scaled) == [("GP127", [("cause", 30)])]
    unscaled = timeline(("scale", 28), ("backward", 29), ("unscale", 0), ("clip", 30), ("step", 31))
    assert protocol_codes(unscaled) == []


def test_a_step_that_moved_frozen_parameters_names_the_freeze() -> None:
    events = timeline(("backward", 5), ("step", 6))
    events.protocol.append(StepEvent(2, "moved", at(6), origin=at(3), params=(11, 12)))
    events.protocol.append(StepEvent(3, "moved", at(6), origin=at(3), params=(11,)))
    (finding,) = conclude(StepProtocol, events)
    assert (finding.code, lines(finding)) == ("GP111", [("cause", 3), ("read", 6)])
    assert finding.details["parameters"] == ["a parameter", "a parameter"]


def test_the_timeline_is_read_as_it_grows() -> None:
    """A long run keeps only the latest events: what was read after each step stays."""
    check = StepProtocol()
    events = timeline(("backward", 19), ("zero", 20), ("step", 21))
    run = Run(events=events)
    check.on_step(StepCall(run, None, at(21)))
    events.protocol.clear()  # dropped by the bounded deque
    events.protocol.extend([StepEvent(3, "backward", at(19)), StepEvent(4, "step", at(21))])
    assert [f.code for f in check.conclude(run)] == ["GP110"]


def test_a_broadcast_loss_names_its_line_and_the_fix() -> None:
    """An op-level check, fed the calls it subscribed to (``ops``) by hand."""
    assert torch.nn.functional.mse_loss in BroadcastTarget.ops
    check = BroadcastTarget()
    run = Run(events=Events())
    output = torch.zeros(32, 1, requires_grad=True)

    def call(target: torch.Tensor, line: int) -> None:
        check.on_op(OpCall(run, torch.nn.functional.mse_loss, (output, target), {}, None, at(line)))

    call(torch.zeros(32, 1), 40)  # same shapes
    call(torch.zeros(1), 40)  # a scalar target broadcasts to no more elements
    assert CheckRunner([]).conclude(run) == [] and list(check.conclude(run)) == []
    call(torch.zeros(32), 41)  # (32, 1) against (32,): (32, 32)
    (finding,) = check.conclude(run)
    assert (finding.code, lines(finding)) == ("GP135", [("cause", 41)])
    assert "output.squeeze(-1)" in finding.message
    assert finding.details["input"] == [32, 1]


def test_backward_on_a_leaf_blames_where_the_leaf_was_made() -> None:
    events = Events()
    assert conclude(LeafBackward, events) == []
    events.leaf_backwards.append(LeafBackwardEvent(5, at(18), at(17), (None, None)))
    (finding,) = conclude(LeafBackward, events)
    assert (finding.code, finding.cause and finding.cause.line) == ("GP115", 17)


def test_a_requires_grad_typo_and_an_empty_load() -> None:
    events = Events()
    events.typos.append(Typo(at(9), "requires_gard", "requires_grad"))
    (typo,) = conclude(FreezeTypos, events)
    assert (typo.code, typo.details["meant"]) == ("GP111", "requires_grad")
    events.empty_loads.append(EmptyLoad(at(11), ["module.fc.weight"], ["fc.weight"]))
    (load,) = conclude(EmptyLoads, events)
    assert (load.code, load.cause and load.cause.line) == ("GP117", 11)


def test_zero_gradients_behind_a_rounding_op_name_the_op() -> None:
    """GP120 subscribes to the zero-derivative ops itself and keeps what it saw."""
    assert torch.round in FlatGradients.ops and torch.Tensor.sign in FlatGradients.ops
    layer = torch.nn.Linear(3, 2)
    for param in layer.parameters():
        param.grad = torch.zeros_like(param)
    events = Events()
    events.backwards.append(Backward(1, at(60), "backward", [], retain_graph=False))
    run = Run(events=events, modules=[layer])
    check = FlatGradients()
    check.on_op(OpCall(run, torch.round, (torch.ones(2),), {}, None, at(57)))  # no grad: data
    assert list(check.conclude(run)) == []
    check.on_op(OpCall(run, torch.round, (torch.ones(2, requires_grad=True),), {}, None, at(58)))
    (finding,) = check.conclude(run)
    assert (finding.code, finding.cause and finding.cause.line) == ("GP120", 58)
    layer.weight.grad = torch.ones_like(layer.weight)  # learning after all: not this
    (partly,) = check.conclude(run)
    assert "bias" in partly.message and "weight" not in partly.message.split("exactly zero")[0]
