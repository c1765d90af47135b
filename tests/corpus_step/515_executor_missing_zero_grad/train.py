"""Case 515 - training executor never zeroes gradients between optimizer steps

Source: https://github.com/wenet-e2e/wekws/pull/73
        "when optimizer.step() is called, optimizer.zero_grad() is not called"
Category: 3 - a step consumes exactly the gradients meant for it

Reported symptom:
    The keyword-spotting model trains erratically: the loss falls for a few
    batches and then oscillates and grows, and gradient clipping fires on almost
    every step.

Root cause:
    Executor.train() runs backward, clips and steps, but never clears the
    gradients. Each step therefore applies the running sum of all gradients
    since the start of training instead of the current batch's gradient.

Ground truth a good tool should report:
    Each optimizer step consumes gradients accumulated over all previous batches;
    zero_grad is missing before the backward in utils/executor.py (the
    `loss.backward()` line is where it must be preceded by optimizer.zero_grad()).
"""
import torch

from model import KWSNet
from utils.executor import Executor

torch.manual_seed(0)

labels = torch.randint(0, 3, (192,))
feats = torch.randn(192, 12, 10) * 0.5
feats[:, :, :3] += labels[:, None, None].float()
loader = [(feats[i:i + 32], labels[i:i + 32]) for i in range(0, 192, 32)]

model = KWSNet()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
executor = Executor()

for epoch in range(4):
    avg = executor.train(model, optimizer, loader)
    print(f"epoch {epoch} avg loss {avg:.4f}")
print(f"final loss {avg:.4f}")
