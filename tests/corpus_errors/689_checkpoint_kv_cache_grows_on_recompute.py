"""Case 689 - attention layer appends to its KV cache inside a checkpointed forward

Source: pytorch/pytorch test/distributed/_composable/test_checkpoint.py, TestCheckpoint.test_checkpoint_kwargs (forward that behaves differently on recomputation -> CheckpointError)
Category: activation checkpointing (non-reentrant)

Reported symptom:
    torch.utils.checkpoint.CheckpointError: torch.utils.checkpoint: Recomputed values for the following tensors have different metadata than during the forward pass.

Root cause:
    CachedAttention keeps a key/value cache for generation and appends the
    current keys/values to it on every forward, even in training. Under
    non-reentrant activation checkpointing the forward runs a second time
    during backward; the recomputation appends again, so the concatenated
    keys/values are longer than in the original pass and the saved tensors'
    shapes no longer match.

Ground truth a good tool should report:
    `self.cache_k.append(k)` / the cache concatenation inside the checkpointed
    forward (CAUSE: the append line) mutates state that the recomputation reads;
    disable the cache while training. Raised in loss.backward() (ERROR).
"""
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)


class CachedAttention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.q = nn.Linear(dim, dim)
        self.kv = nn.Linear(dim, 2 * dim)
        self.cache_k, self.cache_v = [], []

    def forward(self, x):
        k, v = self.kv(x).chunk(2, dim=-1)
        self.cache_k.append(k)  # <- CAUSE
        self.cache_v.append(v)
        keys = torch.cat(self.cache_k, dim=1)
        values = torch.cat(self.cache_v, dim=1)
        attn = torch.softmax(self.q(x) @ keys.transpose(1, 2) / x.shape[-1] ** 0.5, dim=-1)
        return x + attn @ values


class LM(nn.Module):
    def __init__(self, vocab=20, dim=16):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.attn = CachedAttention(dim)
        self.out = nn.Linear(dim, vocab)

    def forward(self, tokens):
        h = self.emb(tokens)
        h = checkpoint(self.attn, h, use_reentrant=False)
        return self.out(h)


model = LM()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
tokens = torch.randint(0, 20, (2, 7))
opt.zero_grad()
logits = model(tokens[:, :-1])
loss = nn.functional.cross_entropy(logits.reshape(-1, 20), tokens[:, 1:].reshape(-1))
loss.backward()  # <- ERROR
opt.step()
print("loss", loss.item())
