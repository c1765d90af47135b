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


class GANLoop:
    def __init__(self, generator, critic, critic_steps):
        self.G, self.D, self.critic_steps = generator, critic, critic_steps
        self.g_opt = torch.optim.Adam(generator.parameters(), lr=1e-4, betas=(0.0, 0.999))
        self.d_opt = torch.optim.Adam(critic.parameters(), lr=4e-4, betas=(0.0, 0.999))
        self.z_dim = generator[0].in_features

    def _critic_step(self, real):
        self.d_opt.zero_grad()
        fake = self.G(torch.randn(len(real), self.z_dim)).detach()
        loss = torch.relu(1.0 - self.D(real)).mean() + torch.relu(1.0 + self.D(fake)).mean()
        loss.backward()
        self.d_opt.step()
        return loss.item()

    def _generator_step(self, batch):
        self.g_opt.zero_grad(set_to_none=False)
        loss = -self.D(self.G(torch.randn(batch, self.z_dim))).mean()
        loss.backward()
        self.g_opt.step()
        return loss.item()

    def iteration(self, data, batch):
        for _ in range(self.critic_steps):
            d_loss = self._critic_step(data[torch.randint(0, len(data), (batch,))])
        return d_loss, self._generator_step(batch)
