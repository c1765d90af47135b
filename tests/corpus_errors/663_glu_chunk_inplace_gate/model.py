"""Case 663 - gated linear unit gates one chunk of its projection in place

Source: pytorch/pytorch test/test_autograd.py, test_inplace_view_multi_output_safe (split/chunk outputs modified in place)
Category: views + in-place

Reported symptom:
    RuntimeError: Output 0 of Split is a view and is being modified inplace. This view is the output of a function that returns multiple views. Such functions do not allow the output views to be modified inplace. You should replace the inplace operation by an out-of-place one.

Root cause:
    See layers.py: GatedFeedForward modifies a `chunk` output in place.

Ground truth a good tool should report:
    The `value.mul_(...)` line in layers.py.
"""
import torch.nn as nn

from layers import Block


class TinyTransformer(nn.Module):
    def __init__(self, vocab=32, dim=16, depth=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.blocks = nn.ModuleList([Block(dim, 32) for _ in range(depth)])
        self.head = nn.Linear(dim, vocab)

    def forward(self, tokens):
        h = self.embed(tokens)
        for block in self.blocks:
            h = block(h)
        return self.head(h)
