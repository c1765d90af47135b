"""Case 629 - EMA of model weights updated with torch.lerp(..., out=shadow_param) (ema module)

Source: pytorch/pytorch test/test_autograd.py, test_out_variant_raises_when_inputs_require_grad (assertRaisesRegex "out=" when the output requires grad)
Category: out-variant

Reported symptom:
    RuntimeError: lerp(): functions with out=... arguments don't support automatic differentiation, but one of the arguments requires grad.

Root cause:
    The shadow model is a deepcopy of the training model, so its parameters are
    leaves with requires_grad=True. ModelEMA.update writes the blend into them with
    torch.lerp(s, p.detach(), w, out=s) while grad mode is on; out= variants are not
    differentiable, and both an input and the output require grad, so the call is
    refused.

Ground truth a good tool should report:
    The `torch.lerp(..., out=s)` line in ModelEMA.update must run under
    torch.no_grad() (e.g. `s.lerp_(p, w)` inside no_grad); the shadow copy created
    in __init__ still requires grad (requires_grad_(False) there also avoids it).
"""
import copy

import torch


class ModelEMA:
    def __init__(self, model, decay=0.99):
        self.decay = decay
        self.shadow = copy.deepcopy(model)  # <- CREATED
        self.shadow.eval()

    def update(self, model):
        w = 1.0 - self.decay
        for s, p in zip(self.shadow.parameters(), model.parameters()):
            torch.lerp(s, p.detach(), w, out=s)  # <- CAUSE,ERROR

    def __call__(self, x):
        return self.shadow(x)
