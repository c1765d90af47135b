"""Clean 390 - ResNet-style blocks with the usual legal in-place operations

What it does:
    torchvision-style BasicBlock: conv -> BN -> ReLU(inplace=True) -> conv -> BN,
    then `out += identity` and an in-place ReLU; the classifier divides its logits by
    a temperature in place; the input batch gets noise added in place before the
    forward pass.

Why it is correct (not a bug):
    - BatchNorm's backward needs its input and saved statistics, not its output, so
      `out += identity` and ReLU(inplace=True) on a BN output clobber nothing saved.
    - ReLU(inplace=True) after BN: ReluBackward0 saves its own (post-op) result.
    - Linear (addmm) saves its input and weight, not its output, so `logits.div_()`
      is safe.
    - `images.add_(...)` modifies a fresh data tensor that requires no grad and that
      no graph has saved yet.
    EXPECT: no findings

Observed (torch 2.13, CPU):
    exit code: 0
    stdout:
        epoch 0: loss=1.4743
        epoch 1: loss=1.4563
        epoch 2: loss=1.4262
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        identity = x if self.down is None else self.down(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += identity
        return self.relu(out)


class TinyResNet(nn.Module):
    def __init__(self, n_classes=4, temperature=2.0):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8),
                                  nn.ReLU(inplace=True))
        self.layer1 = BasicBlock(8, 8)
        self.layer2 = BasicBlock(8, 16, stride=2)
        self.fc = nn.Linear(16, n_classes)
        self.temperature = temperature

    def forward(self, x):
        x = self.layer2(self.layer1(self.stem(x)))
        logits = self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))
        logits.div_(self.temperature)
        return logits


model = TinyResNet()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4)
data = torch.randn(16, 3, 12, 12)
labels = torch.randint(0, 4, (16,))

for epoch in range(3):
    images = data.clone()
    images.add_(0.05 * torch.randn_like(images))  # noise augmentation on the fresh batch
    loss = F.cross_entropy(model(images), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"epoch {epoch}: loss={loss.item():.4f}")
