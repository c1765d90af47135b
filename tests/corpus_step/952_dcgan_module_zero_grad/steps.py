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
import torch.nn.functional as F


def train_iteration(netG, netD, optimizerG, optimizerD, real):
    n = len(real)
    netD.zero_grad()
    errD_real = F.binary_cross_entropy_with_logits(netD(real), torch.ones(n, 1))
    errD_real.backward()
    fake = netG(torch.randn(n, netG.z_dim))
    errD_fake = F.binary_cross_entropy_with_logits(netD(fake.detach()), torch.zeros(n, 1))
    errD_fake.backward()
    optimizerD.step()

    netG.zero_grad()
    errG = F.binary_cross_entropy_with_logits(netD(fake), torch.ones(n, 1))
    errG.backward()
    optimizerG.step()
    return (errD_real + errD_fake).item(), errG.item()
