import torch
import torch.nn as nn
import torch.nn.functional as F


class MoEBlock(nn.Module):
    """Top-1 mixture of experts; keeps its load-balancing loss of the last call."""

    def __init__(self, d_model, n_experts=4):
        super().__init__()
        self.gate = nn.Linear(d_model, n_experts)
        self.experts = nn.ModuleList(
            [nn.Sequential(nn.Linear(d_model, d_model), nn.ReLU()) for _ in range(n_experts)]
        )
        self.n_experts = n_experts
        self.aux_loss = None

    def forward(self, h):
        probs = F.softmax(self.gate(h), dim=-1)
        top_p, top_i = probs.max(dim=-1)
        out = torch.zeros_like(h)
        for e, expert in enumerate(self.experts):
            chosen = top_i == e
            if chosen.any():
                out[chosen] = expert(h[chosen]) * top_p[chosen, None]
        # switch-style balance: fraction routed x mean gate probability, per expert
        routed = F.one_hot(top_i, self.n_experts).float().mean(0)
        self.aux_loss = self.n_experts * (routed * probs.mean(0)).sum()
        return h + out
