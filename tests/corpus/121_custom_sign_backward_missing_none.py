"""Case 121 - straight-through binarizer whose backward returns one gradient for two inputs

Source: https://github.com/1zb/pytorch-image-comp-rnn/issues/4
        "RuntimeError: function SignBackward returned an incorrect number of gradients"
        (maintainer: change the backward's return to `return grad_output, None`)
Category: custom-function contract (backward arity)

Reported symptom:
    RuntimeError: function SignBackward returned an incorrect number of gradients
    (expected 2, got 1)

Root cause:
    The custom autograd.Function's forward takes two inputs after ctx: the
    activations and a Python flag (`stochastic`, the module's training mode).
    backward must return one value per forward input, with None for the flag;
    it returns only the straight-through gradient, so the engine rejects it
    at the first backward.

Ground truth a good tool should report:
    `BinarizeBackward` (the Function defined at line 42) returned 1 gradient
    but its forward (line 46) takes 2 inputs (x, stochastic); the `return`
    at line 56 must return `grad_output, None`.  The error surfaces at
    `loss.backward()` on line 92.
    EXPECT: kind=custom_function_grad_count; function=Binarize; expected=2; got=1;
            cause_line=56; error_line=92

Observed (torch 2.13.0, CPU, this script):
    exit code: 1
    stdout:
        code bits: (4, 8, 4, 4) reconstruction: (4, 3, 16, 16)
    exception:
        RuntimeError: function BinarizeBackward returned an incorrect number of
          gradients (expected 2, got 1)
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Binarize(torch.autograd.Function):
    """Map activations in [-1, 1] to {-1, +1}; gradient passes straight through."""

    @staticmethod
    def forward(ctx, x, stochastic):
        if stochastic:
            # quantisation noise: +1 with probability (1 + x) / 2
            prob = (1 + x) / 2
            return torch.where(torch.rand_like(x) < prob, torch.ones_like(x), -torch.ones_like(x))
        return torch.where(x >= 0, torch.ones_like(x), -torch.ones_like(x))

    @staticmethod
    def backward(ctx, grad_output):
        # straight-through estimator
        return grad_output  # <- CAUSE: forward has 2 inputs (x, stochastic); needs `grad_output, None`


class BitEncoder(nn.Module):
    def __init__(self, bits=8):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, stride=2, padding=1)
        self.conv2 = nn.Conv2d(16, bits, 3, stride=2, padding=1)

    def forward(self, img):
        h = F.relu(self.conv1(img))
        code = torch.tanh(self.conv2(h))
        return Binarize.apply(code, self.training)


class BitDecoder(nn.Module):
    def __init__(self, bits=8):
        super().__init__()
        self.up1 = nn.ConvTranspose2d(bits, 16, 4, stride=2, padding=1)
        self.up2 = nn.ConvTranspose2d(16, 3, 4, stride=2, padding=1)

    def forward(self, bits):
        return torch.sigmoid(self.up2(F.relu(self.up1(bits))))


encoder, decoder = BitEncoder(), BitDecoder()
optimizer = torch.optim.Adam(list(encoder.parameters()) + list(decoder.parameters()), lr=1e-3)
images = torch.rand(4, 3, 16, 16)

for step in range(2):
    optimizer.zero_grad()
    bits = encoder(images)
    recon = decoder(bits)
    loss = F.mse_loss(recon, images)
    if step == 0:
        print("code bits:", tuple(bits.shape), "reconstruction:", tuple(recon.shape))
    loss.backward()  # <- ERROR
    optimizer.step()
print("training step succeeded (bug not reproduced)")
