"""Correct 322 - k-max pooling Function returning (values, indices) with mark_non_differentiable and once_differentiable

Pattern: https://docs.pytorch.org/docs/stable/generated/torch.autograd.function.FunctionCtx.mark_non_differentiable.html
         (sort-like Function: the index output is marked non-differentiable;
         backward decorated with torch.autograd.function.once_differentiable)
Category: correct (custom autograd.Function with a non-differentiable output)

What it does:
    A text CNN pools each feature channel with k-max pooling (keep the k
    largest activations in their original order).  The Function returns the
    values and the integer positions; the positions are marked
    non-differentiable and also returned to the caller, who uses them only for
    logging.  backward scatters the incoming gradient back to the kept
    positions; it is not itself differentiable, so it is decorated with
    once_differentiable.  gradcheck passes and the classifier trains.

Why a naive tool might flag it:
    An output of a custom Function (the indices) has no grad_fn and
    requires_grad=False, backward is handed a gradient for it that it ignores,
    the backward builds its result with an in-place scatter_ on a fresh
    zeros tensor, and part of the input gets exactly zero gradient.

Ground truth a good tool should report:
    Nothing.
    EXPECT: no findings

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        gradcheck: True
        kept positions (sample 0, channel 0): [0, 6, 8]
        loss 0.7520 -> 0.0002
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd.function import once_differentiable

torch.manual_seed(0)


class KMaxPool(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, k):
        top_idx = x.topk(k, dim=-1).indices
        idx, _ = top_idx.sort(dim=-1)          # keep the original order
        values = x.gather(-1, idx)
        ctx.save_for_backward(idx)
        ctx.input_shape = x.shape
        ctx.mark_non_differentiable(idx)
        return values, idx

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_values, grad_idx):
        (idx,) = ctx.saved_tensors
        grad_x = grad_values.new_zeros(ctx.input_shape)
        grad_x.scatter_(-1, idx, grad_values)
        return grad_x, None


class TextCNN(nn.Module):
    def __init__(self, vocab=40, dim=16, channels=12, k=3, n_cls=2):
        super().__init__()
        self.k = k
        self.embed = nn.Embedding(vocab, dim)
        self.conv = nn.Conv1d(dim, channels, 3, padding=1)
        self.fc = nn.Linear(channels * k, n_cls)

    def forward(self, tokens):
        h = F.relu(self.conv(self.embed(tokens).transpose(1, 2)))
        pooled, positions = KMaxPool.apply(h, self.k)
        return self.fc(pooled.flatten(1)), positions


x = torch.randn(2, 3, 7, dtype=torch.double, requires_grad=True)
print("gradcheck:", torch.autograd.gradcheck(lambda t: KMaxPool.apply(t, 3)[0], (x,)))

model = TextCNN()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
tokens = torch.randint(0, 40, (16, 12))
labels = (tokens == 7).any(dim=1).long()
for step in range(60):
    logits, positions = model(tokens)
    loss = F.cross_entropy(logits, labels)
    if step == 0:
        first = loss.item()
        print("kept positions (sample 0, channel 0):", positions[0, 0].tolist())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f"loss {first:.4f} -> {loss.item():.4f}")
