"""Case 920 - layer-wise learning-rate decay applied once, scheduler on top (correct)

Source: https://github.com/jaehyunnn/ViTPose_pytorch/issues/20
        "LayerDecayOptimizer was incorrectly applying layer decay every step instead of once at initialization"
Category: correct (invariant 4)
EXPECT: no findings

Reported symptom:
    None. Lower blocks get smaller learning rates than the head; a cosine
    schedule scales all groups over training.

Root cause:
    None. The per-group learning rates are computed once when the param groups
    are built; the LambdaLR schedule multiplies each group's initial lr by the
    same factor per iteration, so no group's lr collapses to zero and every step
    changes every trainable block.

Ground truth a good tool should report:
    Nothing.
"""


def layer_groups(model, base_lr, rate):
    """One param group per block; the layer-decay factor is applied here, once."""
    blocks = list(model.blocks) + [model.head]
    depth = len(blocks) - 1
    return [
        {"params": list(block.parameters()), "lr": base_lr * rate ** (depth - layer_id)}
        for layer_id, block in enumerate(blocks)
    ]
