"""Case 681 - a gradient monitor and a gradient clipper register different kinds of backward hooks

Source: pytorch/pytorch test/nn/test_module_hooks.py, TestModuleHookNN.test_hooks / _test_hooks (register_backward_hook vs register_full_backward_hook on one module)
Category: module hooks

Reported symptom:
    RuntimeError: Cannot use both regular backward hooks and full backward hooks on a single Module. Please use only one of them.

Root cause:
    utils/monitor.py attaches the legacy Module.register_backward_hook to every
    Linear layer to log gradient norms, while utils/clipping.py attaches
    register_full_backward_hook to the same layers to clip gradients. A module
    may carry either legacy or full backward hooks, never both, so registering
    the second kind on an already-hooked layer raises.

Ground truth a good tool should report:
    The legacy register_backward_hook in utils/monitor.py (CAUSE) conflicts
    with the full hook that utils/clipping.py registers on the same layers;
    switch the monitor to register_full_backward_hook. Raised by the
    register_full_backward_hook call in utils/clipping.py (ERROR).
"""
import torch.nn as nn


class GradMonitor:
    def __init__(self, model):
        self.norms = {}
        for name, module in model.named_modules():
            if isinstance(module, nn.Linear):
                module.register_backward_hook(self._make_hook(name))  # <- CAUSE

    def _make_hook(self, name):
        def hook(module, grad_input, grad_output):
            self.norms[name] = grad_output[0].norm().item()

        return hook
