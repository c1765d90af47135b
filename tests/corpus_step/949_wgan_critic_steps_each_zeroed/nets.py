"""Case 949 - several critic steps per generator step, each critic step clears its own gradients (correct)

Source: https://github.com/ajbrock/BigGAN-PyTorch/issues/25
        (the fixed loop: D_optim.zero_grad() between discriminator iterations)
Category: correct (invariant 3)
EXPECT: no findings

Reported symptom:
    None. A hinge-loss GAN with two critic steps per generator step; the
    generator's loss is backpropagated through the critic, which is not
    frozen.

Root cause:
    None. The critic's optimizer clears its gradients before each critic
    backward, so what the generator's backward left in the critic is gone
    before any critic step. The generator's optimizer clears before the
    generator's backward, with set_to_none=False.

Ground truth a good tool should report:
    Nothing. Gradients of the generator's objective sit in the critic between
    updates, but no critic step uses them.
"""
import torch.nn as nn


def make_generator(z_dim, out_dim):
    return nn.Sequential(nn.Linear(z_dim, 32), nn.ReLU(), nn.Linear(32, out_dim))


def make_critic(in_dim):
    return nn.Sequential(nn.Linear(in_dim, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))
