"""Case 551 - sinusoidal positional encoding kept in nn.Parameter, the buffer line commented out

Source: https://github.com/weihaosky/mogents/issues/11
        "why the pe parameter in your transformer_aux.py is trainable?"
        (`# self.register_buffer('pe', pe)` commented out above `self.pe = nn.Parameter(pe)`,
        in a PositionalEncoding "borrowed from MDM", whose original registers a buffer)
Category: 4 - a step changes what it should and nothing else

Reported symptom:
    The PositionalEncoding module builds the fixed sin/cos table of "Attention is
    all you need" (sequence-first, [max_len, 1, d_model]), yet the table is among
    model.parameters(): the AdamW steps of the motion model change it, so the
    encoding stops being the sinusoid it was built as.

Root cause:
    `self.pe = nn.Parameter(pe)` registers the precomputed table as a trainable
    parameter; the register_buffer line it replaced is commented out. The
    optimizer is built over model.parameters() and trains it with weight decay.

Ground truth a good tool should report:
    The optimizer steps change `pos_enc.pe`, a table computed by a fixed formula
    (sin/cos of arange); it becomes a trainable parameter at the
    `self.pe = nn.Parameter(pe)` line.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, dropout=0.1, max_len=64):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)

        pe = torch.zeros(max_len, d_model)
        position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-np.log(10000.0) / d_model))
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        pe = pe.unsqueeze(0).transpose(0, 1)  # [max_len, 1, d_model]

        # self.register_buffer('pe', pe)
        self.pe = nn.Parameter(pe)  # <- CAUSE

    def forward(self, x):
        x = x + self.pe[: x.shape[0], :]
        return self.dropout(x)


class MotionDenoiser(nn.Module):
    def __init__(self, n_feats=12, d_model=32):
        super().__init__()
        self.inp = nn.Linear(n_feats, d_model)
        self.pos_enc = PositionalEncoding(d_model, dropout=0.0)
        layer = nn.TransformerEncoderLayer(d_model, nhead=4, dim_feedforward=64, dropout=0.0)
        self.encoder = nn.TransformerEncoder(layer, num_layers=1)
        self.out = nn.Linear(d_model, n_feats)

    def forward(self, motion):  # motion: [frames, batch, feats]
        return self.out(self.encoder(self.pos_enc(self.inp(motion))))


frames = torch.linspace(0, 6.28, 20)[:, None, None]
clean = torch.sin(frames * torch.arange(1, 13)[None, None, :] * 0.3).repeat(1, 16, 1)

model = MotionDenoiser()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
pe0 = model.pos_enc.pe.detach().clone()

for step in range(20):
    noisy = clean + 0.3 * torch.randn_like(clean)
    loss = F.mse_loss(model(noisy), clean)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

print(f"pe drifted by {(model.pos_enc.pe - pe0).abs().max().item():.4f}; loss {loss.item():.4f}")
