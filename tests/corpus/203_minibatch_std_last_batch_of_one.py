"""Case 203 - GAN discriminator minibatch-stddev layer: the last batch has one sample,
torch.std over the batch dimension is NaN

Source: https://github.com/ziwei-jiang/PGGAN-PyTorch/issues/1 "loss is NAN"
        (a commenter traced it to Minibatch_std: "std = torch.std(x, dim=0)" on a
        final batch of shape [1, ...] when the dataset size is not a multiple of the
        batch size)
Category: nan-in-forward (variance with zero degrees of freedom)

Reported symptom:
    Training runs fine for most iterations, then the discriminator loss becomes NaN
    at the end of the first epoch and the model never recovers.

Root cause:
    The DataLoader keeps the incomplete last batch (drop_last=False), which holds a
    single image.  torch.std(x, dim=0) uses Bessel's correction (N - 1 = 0), so the
    per-feature std is 0/0 = NaN; the NaN feature map is concatenated to the
    activations and the discriminator output and loss are NaN.

Ground truth a good tool should report:
    First NaN produced by `torch.std(x, dim=0)` in MinibatchStd.forward when the
    batch has size 1 (the 9th sample of a 9-sample dataset with batch_size=4).
    Fix: unbiased=False / correction=0 (or drop_last=True).
    EXPECT: kind=nan_forward; nan_op=std; cause_line=47; created_line=70

Observed (torch 2.13, CPU):
    exit code: 0
    stderr: UserWarning: std(): degrees of freedom is <= 0. ...
    stdout:
        epoch 0 batch 0 (size 4): d_loss=1.3846
        epoch 0 batch 1 (size 4): d_loss=1.3896
        epoch 0 batch 2 (size 1): d_loss=nan
        discriminator weights contain NaN: True
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)


class MinibatchStd(nn.Module):
    """Append the average per-feature std over the batch as an extra channel."""

    def forward(self, x):
        std = torch.std(x, dim=0)  # <- CAUSE,NAN: N - 1 = 0 for a batch of one
        mean_std = std.mean().expand(x.shape[0], 1, x.shape[2], x.shape[3])
        return torch.cat([x, mean_std], dim=1)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.LeakyReLU(0.2),
            nn.Conv2d(8, 8, 3, stride=2, padding=1), nn.LeakyReLU(0.2))
        self.mbstd = MinibatchStd()
        self.head = nn.Sequential(nn.Conv2d(9, 8, 3, padding=1), nn.LeakyReLU(0.2),
                                  nn.Flatten(), nn.Linear(8 * 4 * 4, 1))

    def forward(self, img):
        return self.head(self.mbstd(self.features(img)))


D = Discriminator()
G_fake = lambda n: torch.tanh(torch.randn(n, 3, 8, 8))  # stand-in for a generator
opt_d = torch.optim.Adam(D.parameters(), lr=2e-4, betas=(0.0, 0.99))
real_images = torch.rand(9, 3, 8, 8) * 2 - 1
loader = DataLoader(TensorDataset(real_images), batch_size=4, shuffle=False)  # <- CREATED: 9 = 4 + 4 + 1

for epoch in range(1):
    for i, (real,) in enumerate(loader):
        fake = G_fake(real.shape[0])
        d_real, d_fake = D(real), D(fake)
        d_loss = (F.binary_cross_entropy_with_logits(d_real, torch.ones_like(d_real))
                  + F.binary_cross_entropy_with_logits(d_fake, torch.zeros_like(d_fake)))
        opt_d.zero_grad()
        d_loss.backward()
        opt_d.step()
        print(f"epoch {epoch} batch {i} (size {real.shape[0]}): d_loss={d_loss.item():.4f}")

print("discriminator weights contain NaN:",
      any(torch.isnan(p).any().item() for p in D.parameters()))
