"""Case 952 - DCGAN clearing gradients with netD.zero_grad() and netG.zero_grad() (correct)

Source: https://github.com/LixiangHan/GANs-for-1D-Signal/issues/3
        (netG.zero_grad() in place of optimizerG.zero_grad())
Category: correct (invariant 3)
EXPECT: no findings

Reported symptom:
    None. The DCGAN recipe: update D on real and fake, then G through D.

Root cause:
    None. Each optimizer holds exactly the parameters of one network, so
    netD.zero_grad() clears everything optimizerD steps and netG.zero_grad()
    everything optimizerG steps. The generator's loss leaves gradients in
    netD, which netD.zero_grad() clears at the start of the next iteration,
    before netD's backward.

Ground truth a good tool should report:
    Nothing. Clearing through the module is equivalent here.
"""
import torch.nn as nn


class Generator1D(nn.Module):
    def __init__(self, z_dim, length):
        super().__init__()
        self.z_dim = z_dim
        self.net = nn.Sequential(nn.Linear(z_dim, 64), nn.ReLU(), nn.Linear(64, length), nn.Tanh())

    def forward(self, z):
        return self.net(z)


class Discriminator1D(nn.Module):
    def __init__(self, length):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(length, 64), nn.LeakyReLU(0.2), nn.Linear(64, 1))

    def forward(self, x):
        return self.net(x)
