"""Case 224 - Transformer tutorial: the attention output projection and the LayerNorm
are constructed inside forward()

Source: https://github.com/graykode/nlp-tutorial/issues/29 "If create the Linear()
        casually, it won't be trained during training." (5-1.Transformer: the
        MultiHeadAttention forward does `nn.Linear(n_heads * d_v, d_model)(context)`
        and `nn.LayerNorm(d_model)(output + residual)`); same question in
        https://github.com/pytorch/pytorch/issues/1291
Category: registration (parameters created in forward, never optimised)

Reported symptom:
    No error.  The layer is not trained; outputs are not reproducible (a freshly
    initialised random projection on every call, also in eval mode).

Root cause:
    A module instantiated inside forward() is a local object: it is not an attribute
    of the parent, so it is not registered, its parameters are not in
    model.parameters() (hence not in the optimizer, not in state_dict), and a new
    random weight is drawn at every call.  Gradients are computed into these
    throw-away parameters and discarded.

Ground truth a good tool should report:
    nn.Linear created at line 58 inside MultiHeadAttention.forward on every call;
    its weight receives gradients but belongs to no module and no optimizer (same for the
    LayerNorm at line 59).  Fix: create self.out_proj / self.norm in __init__.
    EXPECT: kind=param_created_in_forward; cause_line=58,59

Observed (torch 2.13, CPU):
    exit code: 0
    stdout:
        step 0: loss=3.4935
        step 1: loss=3.3392
        step 2: loss=3.1973
        step 3: loss=3.0744
        registered parameter tensors: 9 | two eval forwards identical: False
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
D_MODEL, N_HEADS, D_K, VOCAB = 16, 2, 8, 30


class MultiHeadAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.W_Q = nn.Linear(D_MODEL, N_HEADS * D_K)
        self.W_K = nn.Linear(D_MODEL, N_HEADS * D_K)
        self.W_V = nn.Linear(D_MODEL, N_HEADS * D_K)

    def forward(self, q, k, v):
        residual, b = q, q.size(0)
        split = lambda t: t.view(b, -1, N_HEADS, D_K).transpose(1, 2)
        qs, ks, vs = split(self.W_Q(q)), split(self.W_K(k)), split(self.W_V(v))
        attn = torch.softmax(qs @ ks.transpose(-1, -2) / D_K ** 0.5, dim=-1)
        context = (attn @ vs).transpose(1, 2).reshape(b, -1, N_HEADS * D_K)
        output = nn.Linear(N_HEADS * D_K, D_MODEL)(context)  # <- CAUSE: new, unregistered layer per call
        return nn.LayerNorm(D_MODEL)(output + residual)  # <- CAUSE: same for the LayerNorm


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, D_MODEL)
        self.attn = MultiHeadAttention()
        self.head = nn.Linear(D_MODEL, VOCAB)

    def forward(self, tokens):
        h = self.emb(tokens)
        return self.head(self.attn(h, h, h))


model = Encoder()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
tokens = torch.randint(0, VOCAB, (8, 6))
for step in range(4):
    loss = F.cross_entropy(model(tokens).flatten(0, 1), tokens.flatten())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"step {step}: loss={loss.item():.4f}")

model.eval()
with torch.no_grad():
    same = torch.equal(model(tokens), model(tokens))
print("registered parameter tensors:", len(list(model.parameters())),
      "| two eval forwards identical:", same)
