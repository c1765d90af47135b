"""Case 522 - evaluation helper turns grad mode off globally and never turns it back on

Source: https://github.com/pytorch/pytorch/issues/113298
        "unexpectedly, this mutates the grad mode!"
Category: 5 - global switches are scoped

Reported symptom:
    The loss falls during the first epoch and is flat afterwards. An earlier
    "element 0 of tensors does not require grad" error had been silenced by
    forcing requires_grad on the loss, so nothing crashes.

Root cause:
    evaluate() calls torch.set_grad_enabled(False) as a plain function call: it
    sets the process-wide grad mode and is never reverted (a `with` block or the
    decorator form would restore it). Every forward after the first evaluation
    builds no graph; the loss is a detached leaf, backward reaches no parameter
    and the optimizer steps with no gradients.

Ground truth a good tool should report:
    From the second epoch on, training forwards run with grad mode disabled and no
    parameter gets a gradient. Grad mode was switched off and left off by
    `torch.set_grad_enabled(False)` in utils/evaluation.py.
"""
import torch


def evaluate(model, x, y):
    model.eval()
    torch.set_grad_enabled(False)  # <- CAUSE
    acc = (model(x).argmax(1) == y).float().mean().item()
    model.train()
    return acc
