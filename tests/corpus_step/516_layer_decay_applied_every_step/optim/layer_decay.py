"""Case 516 - layer-wise lr decay multiplied into the learning rate at every step

Source: https://github.com/jaehyunnn/ViTPose_pytorch/issues/20
        "The learning rate warms up to the preset value during training and quickly becomes 0"
Category: 4 - a step changes what it should and nothing else

Reported symptom:
    The logged learning rate reaches its preset value and then collapses to 0
    within a few iterations, although training keeps running; the backbone stops
    changing while the loss plateaus.

Root cause:
    LayerDecayOptimizer.step() multiplies each param group's lr by its layer
    scale (rate ** depth) on every call, instead of applying the scale once when
    the groups are built. After k steps a group's lr is base_lr * scale ** k, so
    every group except the top one decays geometrically to zero.

Ground truth a good tool should report:
    The steps stop changing the lower-layer parameters: their effective learning
    rate shrinks geometrically to ~0 after a few steps. The lr is rescaled inside
    step() in optim/layer_decay.py (the `group["lr"] = group["lr"] * group["lr_scale"]` line).
"""


def layer_groups(model, base_lr, rate):
    """One param group per block, lower blocks get smaller learning rates."""
    blocks = list(model.blocks) + [model.head]
    depth = len(blocks) - 1
    groups = []
    for layer_id, block in enumerate(blocks):
        groups.append({
            "params": list(block.parameters()),
            "lr": base_lr,
            "lr_scale": rate ** (depth - layer_id),
        })
    return groups


class LayerDecayOptimizer:
    """Wraps an optimizer and applies ViT-style layer-wise learning-rate decay."""

    def __init__(self, optimizer):
        self.optimizer = optimizer

    def zero_grad(self):
        self.optimizer.zero_grad()

    def step(self):
        for group in self.optimizer.param_groups:
            group["lr"] = group["lr"] * group["lr_scale"]  # <- CAUSE
        self.optimizer.step()
