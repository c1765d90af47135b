"""Case 955 - checkpointed backbone with frozen BatchNorm, gradient noise in hooks (correct)

Source: https://github.com/facebookresearch/fairscale/issues/1035 (checkpointing
        and BatchNorm statistics); gradient noise: Neelakantan et al., "Adding
        Gradient Noise Improves Learning for Very Deep Networks",
        https://arxiv.org/abs/1511.06807
Category: correct (invariant 7)
EXPECT: no findings

Reported symptom:
    None. Fine-tuning with activation checkpointing over a backbone whose
    BatchNorm layers are frozen, and annealed Gaussian noise added to each
    gradient by a tensor hook.

Root cause:
    None. The frozen BatchNorm layers are in eval mode, so the recomputation
    in backward changes no buffer; checkpoint keeps its default RNG
    preservation. The noise hooks draw random numbers during backward on
    purpose: that is the method, not a recomputation of the forward.

Ground truth a good tool should report:
    Nothing.
"""
import torch
import torch.nn.functional as F

from model import Classifier

torch.manual_seed(0)

x = torch.randn(96, 3, 10, 10)
y = (x[:, 0].mean((1, 2)) * 10).long().clamp(-2, 2) + 2
model = Classifier()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
noise = {"sigma": 0.01}


def add_noise(grad):
    return grad + noise["sigma"] * torch.randn_like(grad)


for p in model.parameters():
    p.register_hook(add_noise)

model.train()
for step in range(12):
    xb = x[(step * 16) % 96:(step * 16) % 96 + 16].clone().requires_grad_()
    yb = y[(step * 16) % 96:(step * 16) % 96 + 16]
    loss = F.cross_entropy(model(xb), yb)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    noise["sigma"] = 0.01 / (1 + step) ** 0.55

print(f"final loss {loss.item():.4f}")
