"""Case 527 - load_state_dict(assign=True) silently unties tied embedding weights

Source: https://github.com/pytorch/pytorch/issues/188346
        "`load_state_dict(state_dict, assign=True)` replaces each name with its own fresh object, so the names stop aliasing."
Category: 6 - structure (registration, sharing, replacement)

Reported symptom:
    After loading a checkpoint with assign=True, a language model whose output
    projection is tied to the input embedding lists one parameter more than
    before; named_parameters()/state_dict() yield both names and the optimizer
    updates the formerly shared weight twice, doubling its effective step.

Root cause:
    TinyLM ties lm_head.weight to embed.weight (one Parameter, two names). The
    checkpoint helper loads with assign=True, which sets each state-dict entry as
    its own new Parameter, so embed.weight and lm_head.weight become two separate
    Parameter objects (here still viewing one storage). The optimizer built
    afterwards keeps two Adam states and applies two updates per step to the same
    values: the tie is broken without any error.

Ground truth a good tool should report:
    embed.weight and lm_head.weight were meant to be one shared parameter but are
    now two parameters stepped separately (weight sharing broken); the aliasing
    was lost in checkpoint.py (the `model.load_state_dict(state, assign=True)` line).
"""


def load_pretrained(model, state):
    """Load weights without an extra copy (the state dict tensors become the parameters)."""
    model.load_state_dict(state, assign=True)  # <- CAUSE
    return model
