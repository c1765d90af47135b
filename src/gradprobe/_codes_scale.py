"""The texts of the codes for training at scale, kept apart so ``_codes.py`` stays one
screenful per family: GP41x distributed training (DistributedDataParallel, across ranks) and
GP5xx torch.compile. Plain tuples ``(code, kind, title, explanation, hint)``: ``_codes.py``
makes them :class:`~gradprobe._codes.Code` entries."""

from __future__ import annotations

__all__ = ["COMPILE_CODES", "COMPILE_NOTES", "DISTRIBUTED_CODES"]

Entry = tuple[str, str, str, str, str]


def _entry(code: str, kind: str, title: str, explanation: str, hint: str) -> Entry:
    return (code, kind, title, explanation, hint)


DISTRIBUTED_CODES: tuple[Entry, ...] = (
    _entry(
        "GP411",
        "ddp_parameters_unused_on_some_ranks",
        "parameters are unused on some ranks under DistributedDataParallel",
        "DistributedDataParallel expects every parameter it wraps to receive a gradient on "
        "every rank in every iteration. When a branch or a sub-module call runs on some "
        "ranks and not on others, its parameters get no gradient there: with "
        "find_unused_parameters=False DDP waits for them and stops at the next forward "
        "('Expected to have finished reduction in the prior iteration'), or hangs; with "
        "find_unused_parameters=True their gradient is averaged with zeros from the ranks "
        "that skipped them.",
        "Make every rank run the same modules (compute the branch and multiply its output "
        "by 0 where it should not count), or pass find_unused_parameters=True if the "
        "skipping is intended (a router, a task head).",
    ),
    _entry(
        "GP412",
        "ddp_parameters_not_synchronised",
        "parameters DistributedDataParallel does not synchronise differ across ranks",
        "DistributedDataParallel decides which gradients it all-reduces when it is built: "
        "the parameters that require grad at that moment. A parameter added or replaced "
        "after wrapping, one unfrozen after wrapping, or one excluded from DDP keeps a "
        "gradient local to its rank, so every rank trains its own copy and the copies "
        "drift apart without an error.",
        "Finish the model (new heads, requires_grad changes) before wrapping it in "
        "DistributedDataParallel(...), or wrap it again after the change.",
    ),
    _entry(
        "GP413",
        "ddp_models_differ_across_ranks",
        "the ranks built different models for DistributedDataParallel",
        "DistributedDataParallel compares the parameters of every rank's model when it is "
        "built and refuses models that differ in count or shape ('DDP expects same model "
        "across all ranks'), without naming the parameters. Something rank-dependent (a "
        "rank-specific option, a config read differently, a checkpoint loaded on one rank "
        "only) changed the architecture.",
        "Build the same architecture on every rank: make the option that differs the same "
        "everywhere, and load or broadcast weights after building it.",
    ),
    _entry(
        "GP414",
        "ddp_non_finite_from_one_rank",
        "a NaN or infinity born on one rank reached every rank",
        "DistributedDataParallel averages the gradients of all ranks, so a NaN or infinity "
        "computed on one rank becomes every rank's gradient and then every rank's weights. "
        "The other ranks' own traces start at the all-reduce, not at the line that made it.",
        "Fix the line on the rank named here (a log, division or sqrt of a value from that "
        "rank's data shard), or skip non-finite losses on every rank together.",
    ),
    _entry(
        "GP415",
        "ddp_find_unused_parameters_unneeded",
        "find_unused_parameters=True although every parameter is used",
        "With find_unused_parameters=True DistributedDataParallel searches the autograd graph "
        "of every forward's output for parameters that will get no gradient. When every "
        "parameter is used on every rank the search finds nothing and only costs time, and "
        "the flag would hide a parameter that later stops being used.",
        "Pass find_unused_parameters=False (the default) to DistributedDataParallel(...).",
    ),
    _entry(
        "GP416",
        "ddp_step_without_sync",
        "an optimizer step applied gradients DDP never all-reduced (no_sync)",
        "DistributedDataParallel decides at forward time whether the next backward "
        "all-reduces: a forward run inside model.no_sync() gives a backward that only "
        "accumulates locally. Gradient accumulation relies on that for every micro-batch but "
        "the last; when the last forward before optimizer.step() also ran inside no_sync(), "
        "each rank steps with its own gradients and the replicas silently drift apart.",
        "Run the last micro-batch of each accumulation window (its forward and backward) "
        "outside model.no_sync(); its backward all-reduces the accumulated sum.",
    ),
)

COMPILE_CODES: tuple[Entry, ...] = (
    _entry(
        "GP501",
        "hook_registered_after_compile",
        "a module hook was registered after the compiled model ran; dynamo never calls it",
        "dynamo compiles a module's hooks into the compiled code when the model first runs, "
        "and checks a hook table for changes only if it already held a hook "
        "(torch._dynamo.config.skip_nnmodule_hook_guards). A forward, forward-pre or "
        "backward hook added later to a module that had none of that kind is never called "
        "by calls that reuse the compiled code, and nothing says so. Tensor hooks on "
        "parameters still fire.",
        "Register the hook before the first call of the compiled model (best: before "
        "torch.compile), or call torch._dynamo.reset() after registering it so the next "
        "call recompiles with it.",
    ),
    _entry(
        "GP502",
        "graph_break",
        "dynamo broke the compiled graph here",
        "dynamo could not put this line into the compiled graph (an unsupported call, a "
        "print, a value read back to Python, a data-dependent branch). The code before and "
        "after it is compiled as separate graphs and the break runs eagerly on every call, "
        "which costs speed, and under fullgraph=True it raises.",
        "Follow dynamo's hint for this reason: move the unsupported call out of the "
        "compiled function, replace it with a torch operation, or accept the break. "
        "torch._dynamo.explain(model)(inputs) lists the same breaks.",
    ),
    _entry(
        "GP503",
        "compiled_region_not_observed",
        "compiled models ran while recording; gradprobe saw their eager behaviour only",
        "gradprobe's recorder is hidden from dynamo, so while recording dynamo runs a "
        "compiled model op by op: the findings describe its eager behaviour. The compiled "
        "program itself (the backend's code, its CompiledFunctionBackward nodes, guards and "
        "recompiles) is not observed, and hooks registered after the first compiled call "
        "run under gradprobe although a normal run skips them.",
        "Nothing to fix. To check the compiled program, look at GP501 and GP502 findings, "
        "gradprobe.trace(loss) (each compiled region is one box), and "
        "torch._dynamo.explain(model)(inputs).",
    ),
)

# what a recording of a compiled model could not observe: a note, not a problem
COMPILE_NOTES = frozenset({"GP503"})
