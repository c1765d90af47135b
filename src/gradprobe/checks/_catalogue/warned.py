"""The catalogue's warnings that mean a bug (GP169, :mod:`gradprobe.checks.warned`): torch
warns and goes on, and the run then trains wrongly or leaks. Only warnings that correct code
does not trigger are here; the others are listed in :mod:`gradprobe.checks._torch_messages`
with the reason they give no finding (a deprecation, a performance hint, a debugging aid)."""

from __future__ import annotations

from gradprobe import _compat as t
from gradprobe.checks._catalogue.entry import Entry

__all__ = ["WARNED"]


def _W(
    key: str,
    family: str,
    message: str,
    names: str,
    meaning: str,
    fix: str,
    *,
    blame: str = "raised",
    roles: tuple[str, ...] = ("cause",),
) -> Entry:
    """A warning entry (GP169): torch's text from ``_compat.WARNED_TEXTS``."""
    return Entry(
        key,
        family,
        t.WARNED_TEXTS[key],
        "GP169",
        message,
        names,
        roles,
        meaning,
        fix,
        blame,
        kind="warning",
    )


WARNED: tuple[Entry, ...] = (
    _W(
        "backward_create_graph_cycle",
        "engine",
        "Using backward() with create_graph=True will create a reference cycle between the "
        "parameter and its gradient which can cause a memory leak.",
        "the backward(create_graph=True) call",
        "backward(create_graph=True) stores in each parameter's .grad a gradient that keeps "
        "the graph of its own computation, which holds the parameter: a reference cycle. "
        "Each iteration's graph stays in memory until the .grad is reset to None, so memory "
        "grows step by step.",
        "Compute the gradients you differentiate again with torch.autograd.grad(loss, params, "
        "create_graph=True) and call backward() without create_graph on the final loss; or "
        "set every p.grad = None after the step.",
    ),
    _W(
        "checkpoint_no_grad_inputs",
        "checkpoint",
        "None of the inputs have requires_grad=True. Gradients will be None",
        "the checkpoint(...) call",
        "A reentrant checkpoint (use_reentrant=True) was given no input that requires grad. "
        "Its output then requires no grad either, so backward never enters the checkpointed "
        "block: the parameters inside it get no gradient and never train.",
        "Pass use_reentrant=False (it follows the parameters used inside), or make one input "
        "require grad (x.requires_grad_() on the block's input).",
    ),
    _W(
        "optimizer_duplicate_params",
        "optimizer",
        "optimizer contains a parameter group with duplicate parameters; in future, this will "
        "cause an error",
        "where the list of parameters given to the optimizer was built",
        "The same parameter appears twice in one parameter group, usually a weight tied "
        "between two modules and listed once per module. The optimizer keeps one state per "
        "entry and applies the update twice per step: that parameter learns at twice the "
        "rate (and momentum or Adam state counts it twice).",
        "Build the list from one module that holds both (model.parameters() lists a tied "
        "weight once), or drop duplicates: list({id(p): p for p in params}.values()).",
        blame="argument",
        roles=("cause", "warned"),
    ),
    _W(
        "scheduler_before_optimizer",
        "optimizer",
        "Detected call of `lr_scheduler.step()` before `optimizer.step()`.",
        "the lr_scheduler.step() call",
        "The learning-rate scheduler was stepped before the optimizer ever stepped. Since "
        "PyTorch 1.1 a scheduler's step() belongs after optimizer.step(): called first, it "
        "skips the first value of the schedule, so every step uses the learning rate meant "
        "for the next one (and warmup starts one step late).",
        "Call scheduler.step() after optimizer.step() (per batch or per epoch, as the "
        "schedule is meant).",
    ),
    _W(
        "scheduler_get_lr",
        "optimizer",
        "To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
        "the get_lr() call",
        "scheduler.get_lr() is the scheduler's internal formula for the next step, meant to "
        "be called only inside step(); called from outside it returns a value the optimizer "
        "is not using (for many schedules, the rate after one more decay), so what is logged "
        "or copied from it is wrong.",
        "Read scheduler.get_last_lr() (or the lr entry of each of optimizer.param_groups).",
    ),
    _W(
        "mark_dirty_not_input",
        "custom Function",
        "ctx.mark_dirty() received a tensor that was not an input.",
        "the ctx.mark_dirty(...) call in the Function's forward",
        "ctx.mark_dirty() declares which inputs forward modified in place; it was given a "
        "tensor forward made itself. torch ignores it, but the Function's author believed "
        "an input was written in place, so its backward (or the caller) may rely on that.",
        "Pass only the input tensors forward wrote in place; a new output needs no marking.",
        blame="ctx:mark_dirty",
        roles=("cause", "warned"),
    ),
)
