"""Case 364 - correct: frozen backbone (requires_grad_(False) before the optimizer), trainable head

Source: https://pytorch.org/tutorials/beginner/finetuning_torchvision_models_tutorial.html
        ("feature extraction": set `requires_grad = False` on the pretrained
        layers, then build the optimizer over the parameters that still require
        grad) and https://github.com/pytorch/examples/blob/main/imagenet/main.py
Category: correct code a naive tool flags (parameters that never get a gradient)

What the code does:
    A conv backbone with BatchNorm is frozen with `requires_grad_(False)` and
    kept in eval mode (running statistics fixed); a new linear head is trained
    with an optimizer built *after* the freeze from
    `filter(lambda p: p.requires_grad, ...)`.  Backbone outputs have no
    grad_fn (the input does not require grad either), the head builds the
    graph.

Why a naive tool might flag it:
    Most parameters of the model never receive a gradient and are not in the
    optimizer; the loss graph starts in the middle of the model.

Ground truth a good tool should report:
    Nothing: the frozen parameters are frozen on purpose, the head trains.
    EXPECT: no findings

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        epoch  0 loss 1.3782
        epoch 29 loss 1.3055
        trainable tensors: 2 of 10
        backbone (weights and BN stats) unchanged: True
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Probe(nn.Module):
    def __init__(self, n_classes=4):
        super().__init__()
        self.backbone = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
            nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.head = nn.Linear(32, n_classes)

    def forward(self, x):
        return self.head(self.backbone(x))


model = Probe()
model.backbone.requires_grad_(False)
trainable = [p for p in model.parameters() if p.requires_grad]
optimizer = torch.optim.SGD(trainable, lr=0.5, momentum=0.9)

images = torch.randn(32, 3, 10, 10)
labels = torch.randint(0, 4, (32,))
backbone_before = {k: v.clone() for k, v in model.backbone.state_dict().items()}

model.train()
model.backbone.eval()  # keep the frozen BatchNorm statistics
for epoch in range(30):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(images), labels)
    loss.backward()
    optimizer.step()
    if epoch in (0, 29):
        print(f"epoch {epoch:2d} loss {loss.item():.4f}")

print("trainable tensors:", len(trainable), "of", len(list(model.parameters())))
print("backbone (weights and BN stats) unchanged:",
      all(torch.equal(v, model.backbone.state_dict()[k]) for k, v in backbone_before.items()))
