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
import torch

from models import Discriminator1D, Generator1D
from steps import train_iteration

torch.manual_seed(0)

t = torch.linspace(0, 6.2832, 32)
signals = torch.sin(t[None, :] * torch.rand(512, 1) * 3 + torch.rand(512, 1) * 6.2832)

netG, netD = Generator1D(8, 32), Discriminator1D(32)
optimizerG = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
optimizerD = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))

for it in range(20):
    real = signals[torch.randint(0, 512, (32,))]
    errD, errG = train_iteration(netG, netD, optimizerG, optimizerD, real)

print(f"D {errD:.4f} G {errG:.4f}")
