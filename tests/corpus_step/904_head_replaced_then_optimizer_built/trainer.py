"""Case 904 - classifier head replaced before the optimizer is built (correct)

Source: https://github.com/microsoft/nni/issues/4521
        "I solved this problem by redefining an optimizer"
Category: correct (invariant 6)
EXPECT: no findings

Reported symptom:
    None. A pretrained model gets a new classification head for a new label set;
    the model is moved to the target device and only then is the optimizer built.

Root cause:
    None. Model surgery (replace_head) and .to(device) happen before
    FineTuner creates its optimizer, so the optimizer holds exactly the modules
    used in forward, and each backward's gradients are consumed.

Ground truth a good tool should report:
    Nothing. Replacing a submodule is fine when it happens before the optimizer
    is created.
"""
import torch
import torch.nn.functional as F


class FineTuner:
    def __init__(self, model, device, lr=3e-3):
        self.device = device
        self.model = model.to(device)
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=lr)

    def step(self, x, y):
        x, y = x.to(self.device), y.to(self.device)
        loss = F.cross_entropy(self.model(x), y)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()
