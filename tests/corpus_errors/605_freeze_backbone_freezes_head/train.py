"""Case 605 - fine-tuning only the head after freeze_backbone() (entry point)

Source: pytorch/pytorch test/test_autograd.py, test_backward_badcalls (assertRaisesRegex "does not require grad")
Category: requires-grad

Reported symptom:
    RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn

Root cause:
    model.freeze_backbone() (model.py) sets requires_grad=False on all parameters,
    including the head that is meant to be fine-tuned, so the loss has no grad_fn.

Ground truth a good tool should report:
    model.py, the `for p in self.parameters()` loop of freeze_backbone (should be
    self.backbone.parameters()); raised at loss.backward() below.
"""
import torch
import torch.nn.functional as F

from model import Classifier

torch.manual_seed(0)

model = Classifier()
model.freeze_backbone()
opt = torch.optim.Adam(model.head.parameters(), lr=1e-3)

data = torch.randn(48, 16)
labels = torch.randint(0, 4, (48,))

for epoch in range(2):
    for i in range(0, 48, 16):
        logits = model(data[i:i + 16])
        loss = F.cross_entropy(logits, labels[i:i + 16])
        opt.zero_grad()
        loss.backward()  # <- ERROR
        opt.step()
    print(f"epoch {epoch} loss {loss.item():.3f}")
