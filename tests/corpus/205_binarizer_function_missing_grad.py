"""Case 205 - image-compression binarizer: custom autograd.Function returns one
gradient for a forward that takes two inputs

Source: https://github.com/1zb/pytorch-image-comp-rnn/issues/4
        "RuntimeError: function SignBackward returned an incorrect number of gradients"
        (maintainer: change the backward's `return grad_output` to
        `return grad_output, None`); same error in
        https://github.com/huawei-noah/AdderNet/issues/21.
Category: custom-function-error (backward arity)

Reported symptom:
    RuntimeError: function SignBackward returned an incorrect number of gradients
    (expected 2, got 1)

Root cause:
    Sign.forward(ctx, input, is_training) has two inputs besides ctx, so backward
    must return two values (one per forward input, None for the non-tensor flag).
    The straight-through backward returns only grad_output.

Ground truth a good tool should report:
    The custom Function `Sign` (class defined in this file) has a forward with 2
    inputs; its backward returns 1 value at the `return grad_output` line.
    Fix: `return grad_output, None`.
    EXPECT: kind=custom_function_arity; function=Sign; cause_line=51; error_line=86

Observed (torch 2.13, CPU):
    exit code: 1
    exception:
        RuntimeError: function SignBackward returned an incorrect number of gradients
          (expected 2, got 1)
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Sign(torch.autograd.Function):
    """Stochastic binarization in training, deterministic sign at test time."""

    @staticmethod
    def forward(ctx, input, is_training=True):
        if is_training:
            prob = (1 + input) / 2
            return torch.where(torch.rand_like(input) < prob, 1.0, -1.0)
        return input.sign()

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output  # <- CAUSE: forward has 2 inputs, backward returns 1 gradient


class Binarizer(nn.Module):
    def __init__(self, channels, bits):
        super().__init__()
        self.conv = nn.Conv2d(channels, bits, 1, bias=False)

    def forward(self, x):
        return Sign.apply(torch.tanh(self.conv(x)), self.training)


class CompressionAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(3, 16, 3, stride=2, padding=1), nn.ReLU(),
                                     nn.Conv2d(16, 16, 3, stride=2, padding=1), nn.ReLU())
        self.binarizer = Binarizer(16, 8)
        self.decoder = nn.Sequential(nn.ConvTranspose2d(8, 16, 4, stride=2, padding=1), nn.ReLU(),
                                     nn.ConvTranspose2d(16, 3, 4, stride=2, padding=1))

    def forward(self, img):
        codes = self.binarizer(self.encoder(img))
        return torch.tanh(self.decoder(codes))


def train(steps=3):
    model = CompressionAE()
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-4)
    images = torch.rand(4, 3, 16, 16) * 2 - 1
    model.train()
    for step in range(steps):
        recon = model(images)
        loss = F.l1_loss(recon, images)
        optimizer.zero_grad()
        loss.backward()  # <- ERROR
        optimizer.step()
        print(f"step {step}: L1 = {loss.item():.4f}")


train()
