"""Small MLP generator and discriminator."""
from torch import nn


def make_generator(z_dim=8, out_dim=2):
    return nn.Sequential(nn.Linear(z_dim, 32), nn.ReLU(), nn.Linear(32, out_dim))


def make_discriminator(in_dim=2):
    return nn.Sequential(nn.Linear(in_dim, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))
