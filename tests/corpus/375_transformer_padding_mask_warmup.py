"""A TransformerEncoder classifier with a key padding mask, label smoothing, a per-step
warm-up schedule and gradient clipping (correct)."""

import torch
from torch import nn

torch.manual_seed(0)
layer = nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64, batch_first=True)
encoder = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
embed = nn.Embedding(50, 32, padding_idx=0)
head = nn.Linear(32, 3)
model = nn.ModuleList([embed, encoder, head])
opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.01)
sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 3))
for step in range(5):
    tokens = torch.randint(1, 50, (6, 10))
    tokens[:3, 7:] = 0
    pad = tokens == 0
    h = encoder(embed(tokens), src_key_padding_mask=pad)
    keep = (~pad).unsqueeze(-1).float()
    pooled = (h * keep).sum(1) / keep.sum(1)
    loss = nn.functional.cross_entropy(head(pooled), torch.randint(0, 3, (6,)), label_smoothing=0.1)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    sched.step()
print(float(loss))
