"""Case 225 - fine-tuning: the backbone is "frozen" by setting requires_grad=False on the
tensors returned by model.state_dict()

Source: composite of common forum reports ("I set requires_grad = False for the layers
        in state_dict() but they are still updated"); state_dict() returns detached
        tensors, see the torch.nn.Module.state_dict documentation (keep_vars=False)
Category: registration/wiring (flag set on a copy instead of the Parameter)

Reported symptom:
    No error.  The pretrained backbone, which was supposed to stay fixed, drifts during
    fine-tuning, and the optimizer reports all parameters as trainable.

Root cause:
    With keep_vars=False (the default), state_dict() holds `param.detach()` for each
    parameter: new tensor objects that share storage but not autograd metadata.
    Setting requires_grad=False on them leaves the real nn.Parameter objects untouched,
    so filter(lambda p: p.requires_grad, model.parameters()) keeps every backbone
    parameter and Adam updates them.

Ground truth a good tool should report:
    The assignment at line 61 targets tensors from model.state_dict(), not the
    Parameters; backbone.* still require grad, receive gradients and change after
    optimizer.step().  Fix: iterate model.backbone.parameters() (or named_parameters())
    or call model.backbone.requires_grad_(False).
    EXPECT: kind=freeze_noop; params=backbone.*; cause_line=61

Observed (torch 2.13, CPU):
    exit code: 0
    stdout:
        parameters in optimizer: 5285 of 5285
        step 0: loss=1.5845
        step 1: loss=1.5729
        step 2: loss=1.5623
        backbone.0.weight requires_grad=True, max drift=3.00e-03
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Classifier(nn.Module):
    def __init__(self, n_classes):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
                                      nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.ReLU(),
                                      nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.head = nn.Linear(32, n_classes)

    def forward(self, x):
        return self.head(self.backbone(x))


model = Classifier(n_classes=5)
pretrained = {k: v.clone() for k, v in model.state_dict().items()}  # stand-in for torch.load(...)
model.load_state_dict(pretrained)

for name, tensor in model.state_dict().items():
    if name.startswith("backbone."):
        tensor.requires_grad = False  # <- CAUSE: detached copy, the Parameter is unchanged

optimizer = torch.optim.Adam(filter(lambda p: p.requires_grad, model.parameters()), lr=1e-3)
n_trainable = sum(p.numel() for g in optimizer.param_groups for p in g["params"])
print(f"parameters in optimizer: {n_trainable} of {sum(p.numel() for p in model.parameters())}")

images, labels = torch.randn(16, 3, 16, 16), torch.randint(0, 5, (16,))
for step in range(3):
    loss = F.cross_entropy(model(images), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"step {step}: loss={loss.item():.4f}")

drift = (model.backbone[0].weight - pretrained["backbone.0.weight"]).abs().max().item()
print(f"backbone.0.weight requires_grad={model.backbone[0].weight.requires_grad}, max drift={drift:.2e}")
