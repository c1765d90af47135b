import torch
import torch.nn as nn


class PromptedClassifier(nn.Module):
    """Frozen feature extractor + one learnable prompt and head per task."""

    def __init__(self, d_in=16, dim=32, n_tasks=2, n_classes=3):
        super().__init__()
        self.encoder = nn.Linear(d_in, dim)
        self.encoder.requires_grad_(False)
        self.prompts = nn.ParameterList([nn.Parameter(torch.randn(dim) * 0.5) for _ in range(n_tasks)])
        self.heads = nn.ModuleList([nn.Linear(dim, n_classes) for _ in range(n_tasks)])

    def forward(self, x, task):
        feats = torch.tanh(self.encoder(x) + self.prompts[task])
        return self.heads[task](feats)
