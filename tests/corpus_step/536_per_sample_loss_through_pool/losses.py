"""Case 536 - per-sample losses computed in a worker pool come back detached

Source: https://github.com/pytorch/pytorch/issues/12202
        "after it gets into the sub-process which is get_reward_loss, the gradient is disconnected."
Category: 8 - tensors that require grad do not leave autograd silently

Reported symptom:
    To speed up sample-specific, non-batchable loss computation, the batch is
    split with torch.chunk and sent to a pool with starmap. Training runs, but the
    network never improves: its parameters get no gradient.

Root cause:
    Everything handed to a process pool is pickled and rebuilt on the other side.
    A pickled tensor comes back as a brand-new leaf (its grad_fn is lost), so
    the losses computed in the workers depend only on these new leaves, not on the
    network that produced the features. backward() runs and stops at the copies.

Ground truth a good tool should report:
    The loss does not depend on the model parameters (no parameter gets a
    gradient); the features leave the autograd graph when they are sent through
    the pool in losses.py (the `pool.starmap(get_reward_loss, ...)` line).
"""
import torch


def get_reward_loss(feat, target):
    """Sequential, sample-specific loss (variable length, not batchable)."""
    length = int(target[0].item())
    seq = feat[:length]
    return ((seq.cumsum(0) - target[1:length + 1]) ** 2).mean()


def batch_reward_loss(feats, targets, pool):
    chunks = torch.chunk(feats, feats.shape[0])
    losses = pool.starmap(get_reward_loss, zip([c[0] for c in chunks], targets))  # <- CAUSE
    return torch.stack(losses).mean()
