"""Case 219 - rotary embedding caches its position x frequency table, computed from a
learnable frequency Parameter, across training steps

Source: https://github.com/lucidrains/rotary-embedding-torch/issues/18
        "caching frequency results in RuntimeError: Trying to backward through the graph
        a second time" (the error appeared at the second loss.backward(), when the
        module served the cached frequencies; computing them in every forward fixed it)
Category: backward-through-freed-graph (tensor with history cached on a module)

Reported symptom:
    RuntimeError: Trying to backward through the graph a second time (or directly
    access saved tensors after they have already been freed) ... at the second
    iteration's loss.backward().

Root cause:
    On the first forward the module computes `freqs = outer(positions, self.inv_freq)`
    from an nn.Parameter and stores the RESULT in self.cached_freqs, graph included.
    Step 0's backward frees the saved tensors of that node (einsum -> MulBackward0).
    Step 1 reuses the cached tensor, so its backward walks into the step-0 node and
    finds its buffers freed.  The cache must hold a detached value (only valid if the
    frequencies are not learned) or be recomputed each forward.

Ground truth a good tool should report:
    At step 1, loss.backward() (line 92) reaches the node created at line 61
    during step 0 through `self.cached_freqs`, stored at line 62; its saved
    tensors were freed by step 0's backward.  Fix: do not cache a tensor that depends
    on a Parameter (recompute), or cache `freqs.detach()` when inv_freq is frozen.
    EXPECT: kind=backward_freed_graph; carried_tensor=cached_freqs; created_line=61;
            cause_line=62; error_line=92

Observed (torch 2.13, CPU):
    exit code: 1
    exception:
        RuntimeError: Trying to backward through the graph a second time (or
          directly access saved tensors after they have already been freed). Saved
          intermediate values of the graph are freed when you call .backward() or
          autograd.grad(). Specify retain_graph=True if you need to backward through
          the graph a second time or if you need to access saved tensors after
          calling backward.
    stdout:
        step 0: loss=1.0810
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class RotaryEmbedding(nn.Module):
    def __init__(self, dim, learned_freq=True):
        super().__init__()
        inv_freq = 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim))
        self.inv_freq = nn.Parameter(inv_freq, requires_grad=learned_freq)
        self.cached_freqs = None

    def forward(self, seq_len):
        if self.cached_freqs is not None and self.cached_freqs.shape[0] >= seq_len:
            return self.cached_freqs[:seq_len]
        t = torch.arange(seq_len, dtype=torch.float32)
        freqs = torch.einsum("i,j->ij", t, self.inv_freq)  # <- CREATED
        self.cached_freqs = freqs  # <- CAUSE: cached together with its graph
        return freqs


def rotate(x, freqs):
    x1, x2 = x[..., 0::2], x[..., 1::2]
    cos, sin = freqs.cos(), freqs.sin()
    return torch.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1).flatten(-2)


class TinyAttention(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.rotary = RotaryEmbedding(dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        freqs = self.rotary(x.shape[1])
        q, k = rotate(q, freqs), rotate(k, freqs)
        return self.out(F.scaled_dot_product_attention(q, k, v, is_causal=True))


model = TinyAttention()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(3):
    x = torch.randn(4, 12, 16)
    loss = F.mse_loss(model(x), x.roll(-1, dims=1))
    optimizer.zero_grad()
    loss.backward()  # <- ERROR: at step 1
    optimizer.step()
    print(f"step {step}: loss={loss.item():.4f}")
