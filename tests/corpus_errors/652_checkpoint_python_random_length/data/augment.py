"""Case 652 - token dropping with Python's `random` inside a checkpointed encoder (augment module)

Source: pytorch/pytorch test/test_autograd.py, test_checkpoint_detects_non_determinism (assertRaisesRegex "tensors have different metadata")
Category: checkpoint

Reported symptom:
    torch.utils.checkpoint.CheckpointError: torch.utils.checkpoint: Recomputed values for the following tensors have different metadata than during the forward pass.

Root cause:
    random_crop picks the kept length with Python's random module. The crop runs
    inside the checkpointed encoder, so it is executed again during backward.
    checkpoint restores torch's RNG state for the recomputation but not Python's,
    so the second call keeps a different number of tokens and the recomputed saved
    tensors have a different shape.

Ground truth a good tool should report:
    The `keep = random.randint(...)` line in random_crop: draw the length with torch's
    RNG (torch.randint), or crop outside the checkpointed function. Raised at
    loss.backward() in train.py.
"""
import random


def random_crop(tokens, min_keep):
    keep = random.randint(min_keep, tokens.shape[1])  # <- CAUSE: not replayed by checkpoint
    return tokens[:, :keep]
