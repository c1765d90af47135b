"""Case 132 - rotary-embedding cos/sin cache built from a parameter that requires grad, reused next step

Source: https://github.com/lucidrains/rotary-embedding-torch/issues/18
        "caching frequency results in RuntimeError: Trying to backward through the
        graph a second time" (error "at the second loss.backward() of the
        training"; computing the frequencies in every forward instead of
        reading the cache made it work)
Category: backward through a freed graph (cached tensor reused across iterations)

Reported symptom:
    RuntimeError: Trying to backward through the graph a second time (or directly
    access saved tensors after they have already been freed). ...

Root cause:
    The rotary module caches the cos/sin tables per sequence length.  The
    inverse frequencies are an nn.Parameter created with requires_grad=False,
    so caching looks safe, but the fine-tuning script unfreezes the whole model
    with `model.requires_grad_(True)`.  The table built in step 0 then carries
    a graph (outer -> cat -> cos/sin) back to `inv_freq`; step 0's backward
    frees its saved tensors, and step 1 reads the same cached tensors, so its
    backward walks into the freed CosBackward0/SinBackward0 nodes.  The cache
    must store detached tables (or not cache while inv_freq requires grad).

Ground truth a good tool should report:
    `cos`/`sin` read from self._cache at line 56 in step 1 were created at
    lines 58-60 in step 0 from `inv_freq` (requires grad since
    `model.requires_grad_(True)` at line 103) and stored at line 61; step 0's
    backward freed their graph; step 1's `loss.backward()` at line 113 fails.
    EXPECT: kind=backward_freed_graph; tensor=cos; created_line=60;
            cause_line=61,103; error_line=113

Observed (torch 2.13.0, CPU, this script):
    exit code: 1
    stdout:
        step 0 loss 4.1006
    exception:
        RuntimeError: Trying to backward through the graph a second time (or directly
          access saved tensors after they have already been freed). ...
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class RotaryEmbedding(nn.Module):
    def __init__(self, head_dim, base=10000.0):
        super().__init__()
        inv_freq = 1.0 / base ** (torch.arange(0, head_dim, 2).float() / head_dim)
        self.inv_freq = nn.Parameter(inv_freq, requires_grad=False)
        self._cache = {}

    def forward(self, seq_len):
        if seq_len in self._cache:
            return self._cache[seq_len]  # <- READ
        t = torch.arange(seq_len, dtype=torch.float32)
        freqs = torch.outer(t, self.inv_freq)
        emb = torch.cat([freqs, freqs], dim=-1)
        cos, sin = emb.cos(), emb.sin()  # <- CREATED
        self._cache[seq_len] = (cos, sin)  # <- CAUSE: caches tensors that carry a graph to inv_freq
        return cos, sin


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat([-x2, x1], dim=-1)


class Attention(nn.Module):
    def __init__(self, dim=32, heads=4):
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)
        self.rotary = RotaryEmbedding(self.head_dim)

    def forward(self, x):
        b, n, d = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        cos, sin = self.rotary(n)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        attn = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.out(attn.transpose(1, 2).reshape(b, n, d))


class TinyLM(nn.Module):
    def __init__(self, vocab=50, dim=32):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.attn = Attention(dim)
        self.norm = nn.LayerNorm(dim)
        self.lm_head = nn.Linear(dim, vocab)

    def forward(self, tokens):
        h = self.embed(tokens)
        h = h + self.attn(h)
        return self.lm_head(self.norm(h))


model = TinyLM()
model.requires_grad_(True)  # <- CAUSE: full fine-tuning also unfreezes rotary.inv_freq
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
tokens = torch.randint(0, 50, (4, 12))

for step in range(3):
    logits = model(tokens[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, 50), tokens[:, 1:].reshape(-1))
    optimizer.zero_grad()
    if step == 0:
        print(f"step 0 loss {loss.item():.4f}")
    loss.backward()  # <- ERROR
    optimizer.step()
print("fine-tuning succeeded (bug not reproduced)")
