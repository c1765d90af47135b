"""Case 590 - activation checkpointing hard-codes preserve_rng_state=False with dropout on

Source: https://github.com/allenai/OLMo-core/pull/828
        (apply_activation_checkpointing set preserve_rng_state = False; once a
        recipe turned residual dropout on, the recompute drew fresh masks)
Category: 7 - backward has no side effects on state

Reported symptom:
    Turning activation checkpointing off, which should change nothing but
    memory and speed, lowers the training loss noticeably at the same step; the
    split follows the checkpointing switch exactly.

Root cause:
    The blocks are wrapped with torch.utils.checkpoint and
    preserve_rng_state=False (a left-over from a time no model used dropout).
    The recomputation in backward re-runs the residual dropout from the current
    RNG state, so the gradients are taken for other dropout masks than the ones
    the loss was computed with, and the RNG stream advances by an extra
    forward pass per step.

Ground truth a good tool should report:
    Backward re-ran the blocks' dropout with different random numbers: the
    checkpoint call with preserve_rng_state=False. Keep the default (True).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)


class Block(nn.Module):
    def __init__(self, dim, residual_dropout=0.1):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, 4, batch_first=True)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))
        self.dropout = nn.Dropout(residual_dropout)

    def forward(self, x):
        h = self.norm1(x)
        x = x + self.dropout(self.attn(h, h, h, need_weights=False)[0])
        return x + self.dropout(self.mlp(self.norm2(x)))


class TransformerModel(nn.Module):
    def __init__(self, vocab=50, dim=32, depth=3):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.blocks = nn.ModuleList([Block(dim) for _ in range(depth)])
        self.lm_head = nn.Linear(dim, vocab)
        self.activation_checkpointing = False

    def apply_activation_checkpointing(self):
        self.activation_checkpointing = True

    def forward(self, tokens):
        x = self.embed(tokens)
        for block in self.blocks:
            if self.activation_checkpointing:
                x = checkpoint(block, x, use_reentrant=False, preserve_rng_state=False)  # <- CAUSE
            else:
                x = block(x)
        return self.lm_head(x)


data = torch.randint(0, 50, (64, 17))
model = TransformerModel()
model.apply_activation_checkpointing()
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)

for step in range(16):
    batch = data[(step * 8) % 64:(step * 8) % 64 + 8]
    logits = model(batch[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, 50), batch[:, 1:].reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

print(f"final loss {loss.item():.4f}")
