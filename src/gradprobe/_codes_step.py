"""The texts of the codes of the training-step invariants (GP170-GP189; see docs/invariants.md),
kept apart so ``_codes.py`` stays one screenful per family. Plain tuples ``(code, kind, title,
explanation, hint)``: ``_codes.py`` makes them :class:`~gradprobe._codes.Code` entries."""

from __future__ import annotations

__all__ = ["STEP_CODES"]

Entry = tuple[str, str, str, str, str]


def _entry(code: str, kind: str, title: str, explanation: str, hint: str) -> Entry:
    return (code, kind, title, explanation, hint)


# one entry per invariant check, in code order
STEP_CODES: tuple[Entry, ...] = (
    # invariant 2: every gradient backward produces is consumed
    _entry(
        "GP170",
        "gradient_never_consumed",
        "a module's parameters get gradients that no optimizer steps",
        "Backward fills the gradients of every parameter the loss reaches, but only an "
        "optimizer that holds a parameter applies them. A learnable loss module (class "
        "centres) left out of the optimizer, parameter groups collected by layer type that "
        "skip a module's own Parameters, or a submodule replaced after the optimizer "
        "collected the model's parameters: the gradients are computed at every step, pile "
        "up, and the parameters never change. Nothing raises.",
        "Give those parameters to an optimizer (a param group of their own is fine), and "
        "build the optimizer after the model's last change, or copy new values into the "
        "existing Parameters under torch.no_grad() instead of assigning new ones.",
    ),
    # invariant 4: a step changes what it should, and nothing else
    _entry(
        "GP172",
        "learning_rate_compounded",
        "a factor applied to the learning rate at every step compounded it to nothing",
        "The code sets param_group['lr'] from its own previous value at every step (a "
        "layer-wise decay or a per-group multiplier written as group['lr'] = group['lr'] * "
        "scale inside the step or the loop): after k steps the rate is scale**k of its "
        "start, so within a few dozen steps it is below a millionth of it and the steps "
        "leave those parameters unchanged. No scheduler is involved, so nothing logs it.",
        "Apply the factor once, when the param groups are built (lr=base_lr * scale), or "
        "compute the rate from a stored base at each step (group['lr'] = group['base_lr'] * "
        "factor(step)); for a schedule, use torch.optim.lr_scheduler.",
    ),
    _entry(
        "GP173",
        "fixed_table_trained",
        "a fixed table (a formula of positions) is trained as a parameter",
        "A table computed from positions by a formula (a sinusoidal positional encoding: sin "
        "and cos of arange) is wrapped in nn.Parameter, so model.parameters() hands it to "
        "the optimizer, and every step, weight decay included, changes it: it stops being "
        "the formula the model was designed around, and nothing says so.",
        "Register a fixed table as a buffer (self.register_buffer('pe', pe)); if training it "
        "is meant, say so with nn.Parameter(pe, requires_grad=True).",
    ),
    # invariant 5: global switches are scoped (checks/switches.py)
    _entry(
        "GP174",
        "switch_left_set",
        "a helper left a global switch set, and training ran under it",
        "A function set a process-wide switch for its own work and returned without "
        "restoring it: model.eval() in a validation helper, torch.set_grad_enabled(False) "
        "called as a function, torch.set_default_dtype(torch.bfloat16) in a model loader. "
        "The training that runs after it inherits the switch: steps in eval mode (Dropout "
        "off, BatchNorm frozen), losses without a graph, parameters in low precision whose "
        "updates round away. Nothing raises.",
        "Restore the switch before the function returns (model.train(), a `with "
        "torch.no_grad():` block instead of the plain call, the previous default dtype set "
        "back in a `finally:`), or restore it in the loop right after calling the function.",
    ),
    # invariant 7: backward has no side effects on state (checks/recomputation.py)
    _entry(
        "GP181",
        "recomputation_updated_buffers",
        "a module run again in backward updated its buffers a second time",
        "Activation checkpointing runs a module's forward again during backward to rebuild "
        "what it did not keep. A module in train mode that updates buffers in its forward "
        "(BatchNorm's running mean, variance and num_batches_tracked) updates them again on "
        "that rerun: every batch is counted twice, and the statistics evaluation uses are "
        "not those of the data. Losses and gradients look the same as without "
        "checkpointing. Nothing raises.",
        "Keep layers that update buffers out of the checkpointed function (checkpoint the "
        "convolutions, run the BatchNorm outside), or replace them with GroupNorm/LayerNorm; "
        "if the module must stay inside, undo the second update (halve the momentum, or "
        "save and restore its buffers around the rerun).",
    ),
    _entry(
        "GP182",
        "recomputation_drew_new_random_numbers",
        "a module run again in backward drew other random numbers than its forward",
        "A checkpoint reruns the forward in backward to rebuild activations. Unless the RNG "
        "state of the forward is restored for that rerun, every dropout inside draws a new "
        "mask: the rebuilt activations are not the ones the loss was computed from, the "
        "gradients belong to another network, and the random stream moves on by a whole "
        "extra forward. torch.utils.checkpoint restores it unless preserve_rng_state=False; "
        "a hand-written checkpoint has to do it itself. Nothing raises.",
        "Keep torch.utils.checkpoint's preserve_rng_state=True; in a hand-written "
        "checkpoint, save torch.get_rng_state() in forward and rerun inside "
        "torch.random.fork_rng() after restoring it.",
    ),
    # invariant 6: structure, one module or parameter in one place
    _entry(
        "GP184",
        "module_shared_by_siblings",
        "one module object stands at several slots of a ModuleList or Sequential",
        "The slots of an nn.ModuleList or nn.Sequential are built to be separate layers. "
        "[block] * n repeats one reference, and building a layer once and handing it to "
        "every element of a list comprehension does the same one level down: every slot "
        "is the same object, applies the same weights and trains them together. The model "
        "has fewer layers than it was built to have; nothing raises, and print(model) "
        "still lists every slot.",
        "Build one module per slot (nn.ModuleList([make() for _ in range(n)]), or build the "
        "shared part inside the comprehension). If sharing is meant, register the module "
        "once and call it at each place in forward.",
    ),
)
