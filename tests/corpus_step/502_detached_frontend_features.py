"""Case 502 - features detached between a learnable front-end and the encoder

Source: https://github.com/speechbrain/speechbrain/issues/1396
        "This detaches the tensor from the computation graph."
Category: 1 - every parameter the optimizer holds can get a gradient

Reported symptom:
    Gradients never reach the feature-extraction stage: the learnable filterbank
    keeps its initial weights while only the encoder changes. Gradients with
    respect to the input are also missing.

Root cause:
    The model passes `feats.detach()` to the encoder. Everything computed before
    the detach (the learnable front-end convolution) is cut off from the loss,
    although its parameters were handed to the optimizer.

Ground truth a good tool should report:
    frontend.weight and frontend.bias are in the optimizer but never receive a
    gradient; the graph is cut by the `.detach()` in SpeechModel.forward (the
    `self.encoder(feats.detach())` line).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SpeechModel(nn.Module):
    def __init__(self, n_classes=4):
        super().__init__()
        self.frontend = nn.Conv1d(1, 8, kernel_size=9, padding=4)
        self.encoder = nn.Sequential(
            nn.Conv1d(8, 16, kernel_size=5, padding=2), nn.ReLU(),
            nn.AdaptiveAvgPool1d(1), nn.Flatten(), nn.Linear(16, n_classes),
        )

    def features(self, wav):
        return torch.log1p(self.frontend(wav).abs())

    def forward(self, wav):
        feats = self.features(wav)
        return self.encoder(feats.detach())  # <- CAUSE


t = torch.arange(80, dtype=torch.float32)
labels = torch.randint(0, 4, (128,))
wav = torch.sin((0.3 + 0.5 * labels[:, None]) * t) + 0.2 * torch.randn(128, 80)
wav = wav.unsqueeze(1)

model = SpeechModel()
optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)
w0 = model.frontend.weight.detach().clone()

for step in range(25):
    idx = torch.randint(0, 128, (32,))
    loss = F.cross_entropy(model(wav[idx]), labels[idx])
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

print(f"final loss {loss.item():.4f}  frontend moved {(model.frontend.weight - w0).abs().max().item():.6f}")
