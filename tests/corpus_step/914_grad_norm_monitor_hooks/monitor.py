"""Case 914 - gradient monitor hooks that only read gradients (correct)

Source: https://github.com/TransformerLensOrg/TransformerLens/issues/1160
        "This is not an issue if your return None, since the original gradient is passed through."
Category: correct (invariant 7)
EXPECT: no findings

Reported symptom:
    None. A GradMonitor registers a tensor hook on every parameter to log the
    per-parameter gradient norm, and the training loop reads .grad to clip.

Root cause:
    None. The hooks return None and only append a Python float to a log; they
    change neither the gradient nor any parameter or buffer. Reading gradients
    for clipping and logging is a normal check.

Ground truth a good tool should report:
    Nothing.
"""
import collections


class GradMonitor:
    def __init__(self, model):
        self.norms = collections.defaultdict(list)
        self.handles = [
            p.register_hook(self._make_hook(name)) for name, p in model.named_parameters()
        ]

    def _make_hook(self, name):
        def hook(grad):
            self.norms[name].append(grad.norm().item())
        return hook

    def summary(self):
        return {name: values[-1] for name, values in self.norms.items()}

    def remove(self):
        for h in self.handles:
            h.remove()
