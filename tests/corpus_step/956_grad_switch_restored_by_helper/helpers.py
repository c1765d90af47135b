"""Case 956 - helpers that switch gradients and modes off and put them back (correct)

Source: https://docs.pytorch.org/docs/stable/generated/torch.autograd.grad_mode.set_grad_enabled.html
        (set_grad_enabled used as a function, with the previous mode restored)
Category: correct (invariant 5)
EXPECT: no findings

Root cause:
    None. refresh_targets() calls torch.set_grad_enabled(False) as a plain call
    and restores the previous mode in a finally block; evaluate() switches the
    model to eval under a no_grad decorator and restores the mode it found.
"""
import torch


def refresh_targets(teacher, x):
    previous = torch.is_grad_enabled()
    torch.set_grad_enabled(False)
    try:
        return teacher(x).softmax(-1)
    finally:
        torch.set_grad_enabled(previous)


@torch.no_grad()
def evaluate(model, x, y):
    was_training = model.training
    model.eval()
    accuracy = (model(x).argmax(1) == y).double().mean().item()
    model.train(was_training)
    return accuracy
