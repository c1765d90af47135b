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
import torch

from loop import GANLoop
from nets import make_critic, make_generator

torch.manual_seed(0)

data = torch.randn(2048, 8) * 0.5 + 1.0
loop = GANLoop(make_generator(4, 8), make_critic(8), critic_steps=2)
for it in range(15):
    d_loss, g_loss = loop.iteration(data, batch=32)

print(f"D {d_loss:.4f} G {g_loss:.4f}")
