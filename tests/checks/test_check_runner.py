"""The check runner: subscriptions, isolation (one GP199 per failing check, naming it),
and start/stop; checks built by hand on hand-built events, no model run."""

from __future__ import annotations

from collections.abc import Iterable
from types import SimpleNamespace

import pytest

from gradprobe import Finding, GradprobeTypeError, GradprobeValueError, make_finding
from gradprobe.checks import BackwardCall, Check, CheckRunner, Run, check_name, register


class Finds(Check):
    codes = ("GP113",)

    def conclude(self, run: Run) -> Iterable[Finding]:
        return [make_finding("GP113", message=f"{len(run.events.items)} items")]


class Breaks(Check):
    codes = ("GP106",)

    def conclude(self, run: Run) -> Iterable[Finding]:
        raise KeyError("boom")


class BreaksOnBackward(Check):
    calls = 0

    def on_backward(self, call: BackwardCall) -> Iterable[Finding]:
        BreaksOnBackward.calls += 1
        raise ZeroDivisionError("no")


def run_of(**events: object) -> Run:
    return Run(events=SimpleNamespace(**events))


def test_subscriptions_are_the_events_a_check_implements() -> None:
    assert Finds.subscriptions() == ("conclude",)
    assert BreaksOnBackward.subscriptions() == ("on_backward",)
    assert Check.subscriptions() == ()


def test_a_failing_check_is_one_gp199_naming_it_and_the_others_survive() -> None:
    runner = CheckRunner([Breaks, Finds])
    found = runner.conclude(run_of(items=[1, 2]))
    assert [f.code for f in found] == ["GP113", "GP199"]
    assert found[0].message == "2 items"
    gp199 = found[1]
    assert gp199.details["check"] == check_name(Breaks)
    assert "KeyError" in gp199.message and "Breaks" in gp199.message


def test_a_check_failing_on_every_backward_is_reported_once() -> None:
    BreaksOnBackward.calls = 0
    runner = CheckRunner([BreaksOnBackward, Finds])
    call = BackwardCall(run_of(items=[]), SimpleNamespace(error=None), [])
    for _ in range(3):
        assert runner.backward(call) == []
    assert BreaksOnBackward.calls == 3
    found = runner.conclude(run_of(items=[]))
    assert [f.code for f in found] == ["GP113", "GP199"]


def test_a_snapshot_does_not_report_failures_yet() -> None:
    runner = CheckRunner([Breaks])
    assert runner.conclude(Run(events=None, final=False)) == []
    assert [f.code for f in runner.conclude(Run(events=None))] == ["GP199"]


def test_a_check_that_fails_to_start_is_stopped_and_left_out() -> None:
    stopped: list[str] = []

    class Half(Check):
        def start(self, run: Run) -> None:
            raise RuntimeError("could not patch")

        def stop(self) -> None:
            stopped.append("half")

        def conclude(self, run: Run) -> Iterable[Finding]:
            raise AssertionError("a check that did not start must not conclude")

    class Whole(Check):
        def start(self, run: Run) -> None:
            stopped.append("started")

        def stop(self) -> None:
            stopped.append("whole")

    runner = CheckRunner([Half, Whole])
    runner.start(Run(events=None))
    assert stopped == ["half", "started"]
    runner.stop()
    runner.stop()  # twice is harmless
    assert stopped == ["half", "started", "whole"]
    found = runner.conclude(Run(events=None))
    assert [(f.code, f.details["check"]) for f in found] == [("GP199", check_name(Half))]


def test_on_error_checks_see_what_earlier_ones_added() -> None:
    seen: list[list[str]] = []

    class First(Check):
        def on_error(self, run: Run, found: object) -> Iterable[Finding]:
            return [make_finding("GP104")]

    class Second(Check):
        def on_error(self, run: Run, found: list[Finding]) -> Iterable[Finding]:
            seen.append([f.code for f in found])
            return ()

    runner = CheckRunner([First, Second])
    added = runner.error(Run(events=None, error=ValueError()), [make_finding("GP107")])
    assert [f.code for f in added] == ["GP104"]
    assert seen == [["GP104", "GP107"]]


def test_register_refuses_what_is_not_a_check() -> None:
    with pytest.raises(GradprobeTypeError, match=r"subclass of gradprobe\.checks\.Check"):
        register(object)  # type: ignore[type-var]


def test_register_refuses_unknown_codes() -> None:
    class Unknown(Check):
        codes = ("XYZ999",)

    with pytest.raises(GradprobeValueError, match="XYZ999"):
        register(Unknown)


def test_new_codes_may_not_take_the_gp_prefix() -> None:
    from gradprobe import Code

    class Squatter(Check):
        codes = ("GP998",)
        new_codes = (Code("GP998", "mine", "title", "explanation", "hint", "gp998"),)

    with pytest.raises(GradprobeValueError, match="reserved"):
        register(Squatter)
