"""The hook inspector: which hooks are attached, in what order they fire, what they receive.

- :func:`inventory` lists every hook on a model or a tensor (module forward and backward
  hooks, global module hooks, tensor, post-accumulate-grad and autograd-node hooks) with
  the callable's name and where it is defined;
- :func:`timeline` runs a forward and backward pass and returns the order in which every
  hook fired, leaving every hook as it found it;
- :func:`explain` runs a copy of a module with a legacy ``register_backward_hook`` and a
  ``register_full_backward_hook`` and says what each element of ``grad_input`` really is
  (``nn.Linear``: bias grad summed over the batch, input grad, weight grad transposed).

Importing this package also registers the recorder probe that reports hook findings
(GP301-GP306) in ``gradprobe diagnose``.

Example:
    >>> import torch
    >>> from gradprobe import hooks
    >>> layout = hooks.explain(torch.nn.Linear(3, 5), torch.randn(4, 3, requires_grad=True))
    >>> [slot.role for slot in layout.legacy_grad_input]
    ['param', 'input', 'param_t']
    >>> [slot.label for slot in layout.legacy_grad_input]
    ['grad of bias', 'grad of input 0', 'grad of weight, transposed']
"""

from gradprobe.hooks._explain import GradSlot, HookLayout, explain
from gradprobe.hooks._inventory import GLOBAL_OWNER, HookEntry, HookInventory, HookKind, inventory
from gradprobe.hooks._probe import HookProbe
from gradprobe.hooks._timeline import HookEvent, HookTimeline, timeline

__all__ = [
    "GLOBAL_OWNER",
    "GradSlot",
    "HookEntry",
    "HookEvent",
    "HookInventory",
    "HookKind",
    "HookLayout",
    "HookProbe",
    "HookTimeline",
    "explain",
    "inventory",
    "timeline",
]
