"""Clean 403 - tiny language model with tied input/output embeddings, activation
checkpointing, a one-off forward hook that is removed, and a no_grad validation pass

What it does:
    Token embedding and output projection share one Parameter (weight tying).  Each
    residual MLP block runs under torch.utils.checkpoint (use_reentrant=False), so
    its activations are recomputed in backward.  Once, a forward hook records the
    activation statistics of block 0 and is removed through its handle.  Every epoch
    ends with model.eval() + torch.no_grad() validation and model.train().

Why it is correct (not a bug):
    A tied weight appears twice in the graph and its gradient is the sum of both
    uses (intended); the optimizer sees it once because parameters() deduplicates.
    Checkpointed blocks recompute their forward in backward -- the extra forward is
    expected.  The hook handle is removed right after use, so it does not pile up.
    Validation under no_grad builds no graph and never calls backward.
    EXPECT: no findings

Observed (torch 2.13, CPU):
    exit code: 0
    stdout:
        parameter tensors: 19 (tied weight counted once)
        block0 activations at init: mean=-0.002 std=0.176
        epoch 0: train loss=3.6880  val loss=3.6916
        epoch 1: train loss=3.6413  val loss=3.6922
        epoch 2: train loss=3.5980  val loss=3.6953
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)
VOCAB, DIM, CTX = 40, 32, 8


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(DIM)
        self.mlp = nn.Sequential(nn.Linear(DIM, 4 * DIM), nn.GELU(), nn.Linear(4 * DIM, DIM))

    def forward(self, x):
        return x + self.mlp(self.norm(x))


class TinyLM(nn.Module):
    def __init__(self, depth=3):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, DIM)
        self.blocks = nn.ModuleList(Block() for _ in range(depth))
        self.lm_head = nn.Linear(DIM, VOCAB, bias=False)
        self.lm_head.weight = self.tok.weight  # weight tying
        nn.init.normal_(self.tok.weight, std=0.02)

    def forward(self, idx):
        x = self.tok(idx).mean(dim=1)  # bag-of-context encoder
        for block in self.blocks:
            x = checkpoint(block, x, use_reentrant=False) if self.training else block(x)
        return self.lm_head(x)


model = TinyLM()
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
print("parameter tensors:", len(list(model.parameters())), "(tied weight counted once)")
train_x, train_y = torch.randint(0, VOCAB, (128, CTX)), torch.randint(0, VOCAB, (128,))
val_x, val_y = torch.randint(0, VOCAB, (32, CTX)), torch.randint(0, VOCAB, (32,))

stats = {}
handle = model.blocks[0].register_forward_hook(
    lambda mod, inp, out: stats.update(mean=out.mean().item(), std=out.std().item()))
for epoch in range(3):
    model.train()
    loss = F.cross_entropy(model(train_x), train_y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if epoch == 0:
        handle.remove()
        print(f"block0 activations at init: mean={stats['mean']:.3f} std={stats['std']:.3f}")
    model.eval()
    with torch.no_grad():
        val = F.cross_entropy(model(val_x), val_y)
    print(f"epoch {epoch}: train loss={loss.item():.4f}  val loss={val.item():.4f}")
