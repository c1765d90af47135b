"""Case 582 - the critic's gradients are cleared once per generator step, not per critic step

Source: https://github.com/ajbrock/BigGAN-PyTorch/issues/25
        "WGAN-GP and most other gans I've seen will call D_optim.zero_grad()
        between Discriminator iterations" (the author: "this was a typo!")
Category: 3 - a step consumes exactly the gradients meant for it

Reported symptom:
    With several critic steps per generator step the critic's updates grow
    with each inner step and training is less stable than with one step;
    with num_D_steps=1 nothing looks wrong.

Root cause:
    D_optim.zero_grad() is called once, before the loop over the critic
    steps. The second critic step applies the gradients of the first and
    second batch, the third those of all three: every inner step but the
    first re-applies gradients an earlier step already used.

Ground truth a good tool should report:
    The critic steps consume gradients earlier critic steps already used; the
    `D_optim.zero_grad()` above the inner loop belongs inside it.
"""
import torch
import torch.nn as nn

torch.manual_seed(0)


def toggle_grad(net, on):
    for p in net.parameters():
        p.requires_grad_(on)


data = torch.randn(2048, 8) * 0.5 + 1.0
G = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 8))
D = nn.Sequential(nn.Linear(8, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))
G_optim = torch.optim.Adam(G.parameters(), lr=1e-4, betas=(0.0, 0.999))
D_optim = torch.optim.Adam(D.parameters(), lr=4e-4, betas=(0.0, 0.999))
num_D_steps = 3

for it in range(15):
    toggle_grad(D, True)
    toggle_grad(G, False)
    D_optim.zero_grad()  # <- CAUSE
    for step_index in range(num_D_steps):
        real = data[torch.randint(0, 2048, (32,))]
        fake = G(torch.randn(32, 4))
        D_loss = torch.relu(1.0 - D(real)).mean() + torch.relu(1.0 + D(fake)).mean()
        D_loss.backward()
        D_optim.step()

    toggle_grad(D, False)
    toggle_grad(G, True)
    G_optim.zero_grad()
    G_loss = -D(G(torch.randn(32, 4))).mean()
    G_loss.backward()
    G_optim.step()

print(f"D {D_loss.item():.4f} G {G_loss.item():.4f}")
