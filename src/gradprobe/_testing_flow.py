"""Why each parameter failed ``assert_grad_flows``: the classification and its text."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import torch

from gradprobe._testing_codes import finding, nonleaf_message, short, where
from gradprobe.findings import Finding, Location
from gradprobe.leaves import LeafRow

__all__ = ["Context", "Problem", "grad_problems", "problem_line"]

Tensor = torch.Tensor


@dataclass
class Problem:
    """Why one selected tensor failed, as one message line and the findings behind it."""

    name: str
    shape: tuple[int, ...]
    reason: str
    findings: list[Finding]
    nonfinite: bool = False


@dataclass
class Context:
    """What is known besides the tensors: the traced graph, the recording."""

    traced: bool
    atol: float
    origins: list[str]
    recorded: list[Finding]
    unused: set[str] | None
    cuts: list[tuple[str, Location]]


def grad_problems(
    selected: list[tuple[str, Tensor]], rows: Mapping[str, LeafRow], context: Context
) -> list[Problem]:
    problems: dict[str, Problem] = {}
    checked: list[tuple[str, Tensor]] = []
    for name, tensor in selected:
        shape = tuple(tensor.shape)
        if not tensor.requires_grad:
            message = f"{name!r} has requires_grad=False (frozen), so it gets no gradient."
            problems[name] = Problem(
                name,
                shape,
                "frozen: requires_grad=False, so autograd never computes its gradient "
                "(leave it out with params= if that is intended)",
                [finding("GP107", message=message, parameter=name)],
            )
        elif not tensor.is_leaf and not tensor.retains_grad:
            node = tensor.grad_fn.name() if tensor.grad_fn is not None else "?"
            problems[name] = Problem(
                name,
                shape,
                f"not a leaf (made by {node}), so backward() never fills its .grad",
                [finding("GP106", message=nonleaf_message(name, node), tensor=name)],
            )
        elif tensor.grad is None:
            row = rows.get(name)
            reason, locations = why_no_grad(name, row.note if row else None, context)
            message = f"{name!r} has no .grad after backward(): {reason}."
            problems[name] = Problem(
                name,
                shape,
                f"no .grad: {reason}",
                [finding("GP107", message=message, parameter=name, locations=locations)],
            )
        else:
            checked.append((name, tensor))
    checked = [(name, tensor) for name, tensor in checked if tensor.numel()]
    if checked:
        with torch.no_grad():
            # max |g| propagates NaN and inf, so it answers both questions in one pass
            # (isfinite().all() is ~20x slower on CPU).
            largest = [tensor.grad.abs().amax() for _, tensor in checked]  # type: ignore[union-attr]
            flags = torch.stack(
                [torch.stack((torch.isfinite(m), m <= context.atol)) for m in largest]
            ).tolist()  # one host sync for every parameter
        for (name, tensor), (finite, zero) in zip(checked, flags, strict=True):
            shape = tuple(tensor.shape)
            if not finite:
                problems[name] = nonfinite_problem(name, shape, context)
            elif zero:
                bound = "== 0" if context.atol == 0 else f"<= atol={context.atol:g}"
                message = (
                    f"Every element of {name!r}.grad is zero (|grad| {bound}): backward() "
                    "reached it, but its effect on the loss is multiplied by zero or "
                    "cancelled (a dead ReLU, a zero mask, a bias followed by BatchNorm)."
                )
                problems[name] = Problem(
                    name,
                    shape,
                    f"gradient is zero everywhere (|grad| {bound})",
                    [finding("GP120", message=message, parameter=name)],
                )
    order = [name for name, _ in selected]
    return [problems[name] for name in order if name in problems]


def nonfinite_problem(name: str, shape: tuple[int, ...], context: Context) -> Problem:
    origin = (
        f"; the first backward node to make non-finite values out of finite gradients "
        f"was {context.origins[0]}"
        if context.origins
        else ""
    )
    message = f"The gradient of {name!r} has NaN or infinite values{origin}."
    item = finding(
        "GP202",
        message=message,
        parameter=name,
        node=context.origins[0] if context.origins else None,
    )
    return Problem(name, shape, f"NaN/inf in its gradient{origin}", [item], nonfinite=True)


def why_no_grad(name: str, note: str | None, context: Context) -> tuple[str, tuple[Location, ...]]:
    """Why ``name`` has no ``.grad``, and the lines to look at."""
    if context.traced and not (note or "").startswith("not in the traced graph"):
        return (
            (
                "it is in the graph of the loss, but .grad is None after backward() "
                "(a hook or the code under test cleared it?)"
            ),
            (),
        )
    owner = name.rpartition(".")[0]
    if context.unused is not None and owner and owner in context.unused:
        return f"unused: module {owner!r} never ran in the recorded forward pass", ()
    if context.cuts:
        where = "; ".join(f"{short(loc)} by {how}" for how, loc in context.cuts)
        return (
            f"not in the graph of the loss; the recording saw the graph cut at {where}",
            tuple(loc for _, loc in context.cuts),
        )
    if context.traced:
        return (
            (
                "not in the graph of the loss: unused in forward, or cut by .detach(), .data, "
                "torch.no_grad() or an integer op such as argmax (run under "
                "gradprobe.record() to get the line)"
            ),
            (),
        )
    return (
        (
            "unused in forward, cut from the loss (.detach(), .data, torch.no_grad(), an "
            "integer op), or backward() was not called"
        ),
        (),
    )


def problem_line(problem: Problem) -> str:
    shape = "(" + ", ".join(str(size) for size in problem.shape) + ")"
    line = f"  ✗ {problem.name} {shape}: {problem.reason}"
    for item in problem.findings:
        for location in item.locations:
            line += f"\n      {location.role} at {where(location)}"
    return line
