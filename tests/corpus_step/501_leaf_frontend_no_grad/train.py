"""Case 501 - learnable Gabor front-end computed under torch.no_grad() never learns

Source: https://github.com/denfed/leaf-audio-pytorch/issues/3
        "It appears the convolutional layers weight doesn't change while backpropagation because of this."
Category: 1 - every parameter the optimizer holds can get a gradient

Reported symptom:
    The Gabor filterbank parameters of the LEAF front-end print exactly the same
    values before and after 100 Adam steps; the rest of the network trains.

Root cause:
    GaborConv1d.forward builds its constrained filter parameters inside a
    `with torch.no_grad():` block. The kernel derived from them has no grad_fn,
    so backward never reaches `center` and `bandwidth`; the optimizer holds them
    but they never get a gradient.

Ground truth a good tool should report:
    GaborConv1d.center and GaborConv1d.bandwidth are in the optimizer but their
    .grad stays None every step; the gradient path is cut by the no_grad block in
    layers.py (the `with torch.no_grad():` line in GaborConv1d.forward).
"""
import torch
import torch.nn.functional as F

from model import LeafClassifier

torch.manual_seed(0)

# three classes of synthetic "audio": sinusoids at different frequencies plus noise
t = torch.arange(64, dtype=torch.float32)
freqs = torch.tensor([0.4, 1.1, 2.2])
labels = torch.randint(0, 3, (96,))
phase = torch.rand(96, 1) * 6.28
wav = torch.sin(freqs[labels][:, None] * t[None, :] + phase) + 0.3 * torch.randn(96, 64)
wav = wav.unsqueeze(1)

model = LeafClassifier()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
center_before = model.frontend.center.detach().clone()

for step in range(20):
    idx = torch.randint(0, 96, (32,))
    logits = model(wav[idx])
    loss = F.cross_entropy(logits, labels[idx])
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

moved = (model.frontend.center.detach() - center_before).abs().max().item()
print(f"final loss {loss.item():.4f}  gabor centre moved by {moved:.6f}")
