"""Case 228 - inpainting GAN trainer: the discriminator's loss is backpropagated every
iteration but optimizer_d.step() is never called

Source: https://github.com/zhaoyuzhi/deepfillv2/issues/6 "Discriminator parameter not
        update?" ("It seems like that you do not include optimizer.step in
        trainer.py"; the author confirmed and added it)
Category: training-step protocol (one of two optimizers never stepped)

Reported symptom:
    No error.  The discriminator stays at its random initialisation, so the
    adversarial term gives the generator a meaningless signal.

Root cause:
    Two optimizers: optimizer_g over the generator, optimizer_d over the patch
    discriminator.  The D phase does zero_grad() and loss_D.backward() but the
    step() call is missing, so D's gradients are computed and then thrown away by the
    next zero_grad().  Nothing fails because the generator phase is complete.

Ground truth a good tool should report:
    optimizer_d (created at line 61) is zeroed and its parameters receive
    gradients from loss_D.backward() at line 74, but optimizer_d.step() is never
    called; discriminator parameters never change.  Fix: optimizer_d.step() right after
    the D backward.
    EXPECT: kind=optimizer_never_stepped; optimizer=optimizer_d; params=discriminator.*;
            cause_line=74

Observed (torch 2.13, CPU):
    exit code: 0
    stdout:
        iter 0: loss_D=2.0103 loss_G=0.1275
        iter 1: loss_D=2.0143 loss_G=0.1255
        iter 2: loss_D=2.0107 loss_G=0.1220
        iter 3: loss_D=2.0167 loss_G=0.1253
        discriminator parameters changed: False
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class GatedGenerator(nn.Module):
    def __init__(self, ch=16):
        super().__init__()
        self.feat = nn.Conv2d(4, ch, 3, padding=1)
        self.gate = nn.Conv2d(4, ch, 3, padding=1)
        self.out = nn.Conv2d(ch, 3, 3, padding=1)

    def forward(self, img, mask):
        x = torch.cat([img * (1 - mask), mask], dim=1)
        h = F.elu(self.feat(x)) * torch.sigmoid(self.gate(x))
        return torch.tanh(self.out(h))


discriminator = nn.Sequential(  # PatchGAN on (image, mask)
    nn.Conv2d(4, 16, 4, stride=2, padding=1), nn.LeakyReLU(0.2),
    nn.Conv2d(16, 1, 4, stride=2, padding=1))
generator = GatedGenerator()
optimizer_g = torch.optim.Adam(generator.parameters(), lr=1e-4, betas=(0.5, 0.999))
optimizer_d = torch.optim.Adam(discriminator.parameters(), lr=4e-4, betas=(0.5, 0.999))
d_before = [p.detach().clone() for p in discriminator.parameters()]

for it in range(4):
    img = torch.rand(4, 3, 32, 32) * 2 - 1
    mask = torch.zeros(4, 1, 32, 32)
    mask[:, :, 8:24, 8:24] = 1.0
    completed = generator(img, mask) * mask + img * (1 - mask)

    optimizer_d.zero_grad()
    fake_score = discriminator(torch.cat([completed.detach(), mask], 1))
    real_score = discriminator(torch.cat([img, mask], 1))
    loss_D = F.relu(1 - real_score).mean() + F.relu(1 + fake_score).mean()  # hinge loss
    loss_D.backward()  # <- CAUSE: not followed by optimizer_d.step()

    optimizer_g.zero_grad()
    loss_G = F.l1_loss(completed, img) - 0.01 * discriminator(torch.cat([completed, mask], 1)).mean()
    loss_G.backward()
    optimizer_g.step()
    print(f"iter {it}: loss_D={loss_D.item():.4f} loss_G={loss_G.item():.4f}")

changed = any(not torch.equal(a, b) for a, b in zip(d_before, discriminator.parameters()))
print("discriminator parameters changed:", changed)
