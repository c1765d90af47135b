"""Invariant 3, a step applies exactly the gradients meant for it (GP134): steps whose
gradients sum a backward an earlier step applied and a later one. Named at the line to
change (a reset of the wrong object, a reset placed too early, or the step after which
nothing reset them), built from hand-made events and from scripts; the correct loops of the
same shapes (accumulation, GANs and actor-critics that reset their own gradients, SAM,
L-BFGS, ``model.zero_grad()`` of the whole model) stay silent."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from _run import diagnose, line_of, roles

from gradprobe._recorder import Events
from gradprobe._recorder.events import StepEvent
from gradprobe.checks import CheckRunner, Run
from gradprobe.checks.protocol import StepProtocol
from gradprobe.findings import Finding

FILE = "/project/train.py"
A, B = 101, 202  # optimizer ids


def at(line: int) -> tuple[str, int, str]:
    return (FILE, line, "<module>")


def spilled(*events: StepEvent) -> list[Finding]:
    recorded = Events()
    recorded.protocol.extend(events)
    found = CheckRunner([StepProtocol]).conclude(Run(events=recorded))
    return [f for f in found if f.code == "GP134"]


def causes(found: list[Finding]) -> list[int]:
    return [loc.line for f in found for loc in f.locations if loc.role == "cause"]


def backward(order: int, line: int) -> StepEvent:
    return StepEvent(order, "backward", at(line))


def step(order: int, line: int, optimizer: int, *sums: tuple[int, ...]) -> StepEvent:
    return StepEvent(order, "step", at(line), optimizer=optimizer, grads=1, sums=sums)


def zero(order: int, line: int, optimizer: int = 0) -> StepEvent:
    return StepEvent(order, "zero", at(line), optimizer=optimizer, grads=1)


def test_a_sum_over_an_earlier_step_is_named_at_that_step_from_the_second() -> None:
    never = [backward(0, 10), step(1, 11, A, (0,)), backward(2, 10), step(3, 11, A, (0, 2))]
    assert spilled(*never) == []  # one step on such a sum is not yet a loop
    never += [backward(4, 10), step(5, 11, A, (0, 2, 4))]
    (finding,) = spilled(*never)
    assert causes([finding]) == [11]
    assert finding.details == {"steps": 2, "reset": "never", "other_objective": False}


def test_accumulation_windows_and_one_backward_for_two_optimizers_are_silent() -> None:
    windows = [
        backward(0, 10),
        backward(1, 10),
        step(2, 11, A, (0, 1)),
        zero(3, 12, A),
        backward(4, 10),
        backward(5, 10),
        step(6, 11, A, (4, 5)),
        zero(7, 12, A),
        backward(8, 10),
        backward(9, 10),
        step(10, 11, A, (8, 9)),
    ]
    assert spilled(*windows) == []
    shared = [backward(0, 10), step(1, 11, A, (0,)), step(2, 12, B, (0,))]
    shared += [zero(3, 13, A), zero(4, 13, B), backward(5, 10)]
    shared += [step(6, 11, A, (5,)), step(7, 12, B, (5,))]
    assert spilled(*shared) == []


def _gan(reset_d: int | None, *, wrong: bool = False) -> list[StepEvent]:
    """Three iterations of: G's backward (also reaching D), G's step, D's backward, D's
    step; D reset at the top at line ``reset_d`` (or never), ``wrong``: G reset in between."""
    events: list[StepEvent] = []
    for base in (0, 10, 20):
        if reset_d is not None:
            events.append(zero(base, reset_d, B))
        events += [backward(base + 1, 30), step(base + 2, 31, A, (base + 1,))]
        if wrong:
            events.append(zero(base + 3, 32, A))
        kept = (base - 6,) if reset_d is None and base else ()  # D's previous backward
        events += [backward(base + 4, 33), step(base + 5, 34, B, (*kept, base + 1, base + 4))]
    return events


def test_a_step_on_another_objective_s_gradients_is_named_at_the_reset_to_move() -> None:
    (finding,) = spilled(*_gan(reset_d=5))
    assert causes([finding]) == [5]  # D's zero_grad() ran before G's backward
    assert finding.details == {"steps": 3, "reset": "too_early", "other_objective": True}
    (finding,) = spilled(*_gan(reset_d=None, wrong=True))
    assert causes([finding]) == [32]  # G's zero_grad() where D's was meant
    assert finding.details["reset"] == "wrong_object"
    (finding,) = spilled(*_gan(reset_d=None))
    assert causes([finding]) == [31]  # nothing reset D after G's step
    assert finding.message.startswith("Nothing reset the gradients after the step at line 31")


def test_a_reset_before_the_loop_is_not_taken_for_the_one_to_move() -> None:
    never = [zero(0, 5, A)]
    for base in (1, 3, 5):
        sums = tuple(range(1, base + 1, 2))
        never += [backward(base, 10), step(base + 1, 11, A, sums)]
    (finding,) = spilled(*never)
    assert causes([finding]) == [11]


def test_closure_steps_are_not_read() -> None:
    closure = StepEvent(3, "step", at(11), optimizer=A, grads=1, closure=True, sums=((0, 2),))
    events = [backward(0, 10), step(1, 11, A, (0,)), backward(2, 10), closure]
    assert spilled(*events, backward(4, 10), replace(closure, order=5)) == []


# -- scripts -------------------------------------------------------------------------------

_HEAD = """
import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(4, 8), nn.ReLU())
decoder = nn.Linear(8, 1)
G = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 4))
D = nn.Sequential(nn.Linear(4, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))
opt_g = torch.optim.Adam(G.parameters(), lr=1e-3)
opt_d = torch.optim.Adam(D.parameters(), lr=1e-3)
batches = [torch.randn(8, 4) for _ in range(6)]
"""


def gp134(tmp_path: Path, body: str) -> tuple[list[tuple[str, int | None]], str]:
    found, text = diagnose(tmp_path, _HEAD + body)
    return [where for f in found if f.code == "GP134" for where in roles(f)], text


def test_zero_grad_of_another_module_is_named(tmp_path: Path) -> None:
    body = """
opt = torch.optim.SGD([*encoder.parameters(), *decoder.parameters()], lr=0.1)
for x in batches:
    {reset}
    decoder(encoder(x)).pow(2).mean().backward()
    opt.step()
"""
    found, text = gp134(tmp_path, body.format(reset="decoder.zero_grad()  # not the encoder"))
    assert found[0] == ("cause", line_of(text, "not the encoder"))
    whole = "nn.Sequential(encoder, decoder).zero_grad()"
    for reset in ("opt.zero_grad()", "opt.zero_grad(set_to_none=False)", whole):
        assert gp134(tmp_path, body.format(reset=reset))[0] == [], reset


def test_gan_resets_are_named_where_they_miss_and_silent_where_they_fit(
    tmp_path: Path,
) -> None:
    body = """
for x in batches:
    {top}
    fake = G(torch.randn(8, 2))
    opt_g.zero_grad()
    F.softplus(-D(fake)).mean().backward()  # reaches D too
    opt_g.step()
    {before_d}
    (F.softplus(-D(x)).mean() + F.softplus(D(fake.detach())).mean()).backward()
    opt_d.step()
"""
    found, text = gp134(tmp_path, body.format(top="opt_d.zero_grad()  # too early", before_d=""))
    assert found[0] == ("cause", line_of(text, "too early"))
    found, text = gp134(tmp_path, body.format(top="", before_d="opt_g.zero_grad()  # meant D"))
    assert found[0] == ("cause", line_of(text, "meant D"))
    found, text = gp134(tmp_path, body.format(top="", before_d="opt_d.zero_grad()"))
    assert found == []
    found, text = gp134(tmp_path, body.format(top="", before_d="D.zero_grad()"))
    assert found == []


def test_a_reset_after_backward_leaves_no_parameter_without_gradient(tmp_path: Path) -> None:
    """The reset placed between backward and step is GP110's: the parameters it emptied
    were reached by backward, so GP107 must not say they got no gradient."""
    found, text = diagnose(
        tmp_path,
        _HEAD
        + """
opt = torch.optim.SGD([*encoder.parameters(), *decoder.parameters()], lr=0.1)
for x in batches:
    decoder(encoder(x)).pow(2).mean().backward()
    opt.zero_grad()  # before the step
    opt.step()
""",
    )
    assert [(f.code, roles(f)[0]) for f in found] == [
        ("GP110", ("cause", line_of(text, "before the step")))
    ]


def test_accumulation_sam_and_lbfgs_are_silent(tmp_path: Path) -> None:
    accumulate = """
opt = torch.optim.SGD([*encoder.parameters(), *decoder.parameters()], lr=0.1)
for i, x in enumerate(batches + batches[:1]):
    (decoder(encoder(x)).pow(2).mean() / 3).backward()
    if (i + 1) % 3 == 0 or i == len(batches):
        opt.step()
        opt.zero_grad(set_to_none=False)
"""
    sam = """
opt = torch.optim.SGD([*encoder.parameters(), *decoder.parameters()], lr=0.1)
params = [*encoder.parameters(), *decoder.parameters()]
for x in batches:
    decoder(encoder(x)).pow(2).mean().backward()
    with torch.no_grad():
        eps = [0.05 * p.grad / (p.grad.norm() + 1e-12) for p in params]
        for p, e in zip(params, eps):
            p.add_(e)
    opt.zero_grad()
    decoder(encoder(x)).pow(2).mean().backward()
    with torch.no_grad():
        for p, e in zip(params, eps):
            p.sub_(e)
    opt.step()
    opt.zero_grad()
"""
    lbfgs = """
opt = torch.optim.LBFGS([*encoder.parameters(), *decoder.parameters()], max_iter=3)
for x in batches[:3]:
    def closure():
        opt.zero_grad()
        loss = decoder(encoder(x)).pow(2).mean()
        loss.backward()
        return loss
    opt.step(closure)
"""
    for body in (accumulate, sam, lbfgs):
        assert gp134(tmp_path, body)[0] == [], body
