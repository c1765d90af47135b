"""Case 624 - vanilla GAN on a 2-D Gaussian (entry point)

Source: pytorch/pytorch test/test_autograd.py, test_no_grad_modifies_version / test_inplace (saved tensors modified in-place before backward)
Category: version-counter

Reported symptom:
    RuntimeError: one of the variables needed for gradient computation has been modified by an inplace operation: [torch.FloatTensor [32, 1]], which is output 0 of AsStrided, is at version 2; expected version 1 instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).

Root cause:
    gan_step.py builds the generator loss from a discriminator output computed
    before optD.step() changed the discriminator weights in-place.

Ground truth a good tool should report:
    gan_step.py, the `loss_g = ...(d_fake, ones)` line (re-run D on the fakes after
    the discriminator step); raised at loss_g.backward() in gan_step.
"""
import torch

from gan_step import gan_step
from nets import make_discriminator, make_generator

torch.manual_seed(0)

G, D = make_generator(), make_discriminator()
opt_g = torch.optim.Adam(G.parameters(), lr=2e-4, betas=(0.5, 0.999))
opt_d = torch.optim.Adam(D.parameters(), lr=2e-4, betas=(0.5, 0.999))

for it in range(3):
    real = torch.randn(16, 2) * 0.3 + 1.0
    z = torch.randn(16, 8)
    ld, lg = gan_step(G, D, opt_g, opt_d, real, z)
    print(f"iter {it} D {ld:.3f} G {lg:.3f}")
