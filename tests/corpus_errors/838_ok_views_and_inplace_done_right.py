"""Case 838 - multi-output views, no_grad edits and in-place ops written the safe way

Source: pytorch/pytorch test/test_autograd.py, test_autograd_views_codegen / test_inplace_view_multi_output_safe (out-of-place updates of unbind/chunk outputs; view and in-place both inside no_grad)
Category: correct

Reported symptom:
    none - the script trains for a few steps and exits normally.

Root cause:
    none - the query from unbind and the value half from chunk are scaled
    out of place; the padding row is zeroed with both the view and the
    in-place write inside torch.no_grad(); ReLU(inplace=True) acts on a fresh
    Linear output that nothing else saved.

Ground truth a good tool should report:
    Nothing.
EXPECT: no findings
"""
import torch
import torch.nn as nn

torch.manual_seed(0)


class AttentionGLU(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.scale = (dim // heads) ** -0.5
        self.qkv = nn.Linear(dim, 3 * dim)
        self.ff_in = nn.Linear(dim, 4 * dim)
        self.ff_out = nn.Sequential(nn.Linear(2 * dim, dim), nn.ReLU(inplace=True), nn.Linear(dim, dim))

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).reshape(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4).unbind(0)
        q = q * self.scale
        attn = (q @ k.transpose(-2, -1)).softmax(-1)
        x = x + (attn @ v).transpose(1, 2).reshape(b, t, d)
        value, gate = self.ff_in(x).chunk(2, dim=-1)
        value = value * torch.sigmoid(gate)
        return x + self.ff_out(value)


PAD = 0
emb = nn.Embedding(20, 16)
block = AttentionGLU(16, 4)
head = nn.Linear(16, 20)
params = [*emb.parameters(), *block.parameters(), *head.parameters()]
opt = torch.optim.Adam(params, lr=1e-3)
tokens = torch.randint(0, 20, (3, 8))

for step in range(3):
    opt.zero_grad()
    logits = head(block(emb(tokens[:, :-1])))
    loss = nn.functional.cross_entropy(logits.reshape(-1, 20), tokens[:, 1:].reshape(-1))
    loss.backward()
    opt.step()
    with torch.no_grad():
        pad_row = emb.weight[PAD]
        pad_row.zero_()
    print("step", step, round(loss.item(), 4))
