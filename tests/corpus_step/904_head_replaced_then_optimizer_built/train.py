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

from model import Net, replace_head
from trainer import FineTuner

torch.manual_seed(0)

pretrained = Net(n_classes=10)
model = replace_head(pretrained, n_classes=3)
tuner = FineTuner(model, torch.device("cpu"))

x = torch.randn(512, 16)
y = (x[:, :3] + 0.1 * torch.randn(512, 3)).argmax(1)

for step in range(30):
    idx = torch.randint(0, 512, (64,))
    loss = tuner.step(x[idx], y[idx])
    if step == 0:
        first = loss

print(f"loss {first:.4f} -> {loss:.4f}")
