"""Case 692 - has_aux=True but the loss function returns a list

Source: pytorch/pytorch test/functorch/test_eager_transforms.py, TestGradTransform.test_grad_aux_tensor (assertRaisesRegex 'output of function f should be a tuple')
Category: torch.func transforms

Reported symptom:
    RuntimeError: grad_and_value(f)(*args): output of function f should be a tuple: (output, aux) if has_aux is True

Root cause:
    With has_aux=True, torch.func.grad expects f to return exactly a 2-tuple
    (scalar_loss, aux). The loss function returns `[loss, logits]`, a list,
    which is rejected.

Ground truth a good tool should report:
    The `return [loss, logits]` line (CAUSE) must return a tuple; the grad
    call raises (ERROR).
"""
import torch
import torch.nn as nn
from torch.func import functional_call, grad

torch.manual_seed(0)

net = nn.Linear(4, 2)
params = {k: v.detach() for k, v in net.named_parameters()}


def loss_and_logits(params, x, y):
    logits = functional_call(net, params, (x,))
    loss = nn.functional.cross_entropy(logits, y)
    return [loss, logits]  # <- CAUSE


x = torch.randn(8, 4)
y = torch.randint(0, 2, (8,))
grads, logits = grad(loss_and_logits, has_aux=True)(params, x, y)  # <- ERROR
acc = (logits.argmax(-1) == y).float().mean()
print("acc", acc.item(), {k: g.norm().item() for k, g in grads.items()})
