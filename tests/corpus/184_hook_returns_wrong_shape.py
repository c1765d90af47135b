"""Case 184 - a gradient hook that reduces the gradient it receives.

Source: a frequent discuss.pytorch.org report (paraphrased): "hook 'clip' has changed the
size of value" when normalising gradients in a hook.
Root cause: the tensor hook returns a tensor of another shape (a per-row norm); a hook must
return a gradient shaped like the tensor, or None.
"""
import torch
from torch import nn

torch.manual_seed(0)
layer = nn.Linear(6, 4)


def clip(grad):
    return grad.norm(dim=1, keepdim=True)  # <- CAUSE


layer.weight.register_hook(clip)  # <- REGISTERED
loss = layer(torch.randn(3, 6)).pow(2).sum()
loss.backward()  # <- ERROR
