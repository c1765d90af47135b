"""Clean 393 - transfer learning: frozen backbone (requires_grad False, eval mode), the
optimizer only gets the new head

What it does:
    A "pretrained" conv backbone is frozen with requires_grad_(False) and kept in
    eval() so its BatchNorm statistics stay fixed; a new classifier head is attached
    and the optimizer is built afterwards from the head's parameters only.  The
    script checks that the backbone did not change and that the head did.

Why it is correct (not a bug):
    Leaving the frozen parameters out of the optimizer is the intended way to freeze
    them; they get no .grad because they do not require grad; the optimizer is
    created after the head is attached, so it holds the live head parameters.
    model.train() is followed by backbone.eval() on purpose.
    EXPECT: no findings

Observed (torch 2.13, CPU):
    exit code: 0
    stdout:
        epoch 0: loss=1.5959
        epoch 1: loss=1.5844
        epoch 2: loss=1.5739
        epoch 3: loss=1.5644
        backbone unchanged: True  head changed: True
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
            nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.head = nn.Linear(32, 10)

    def forward(self, x):
        return self.head(self.backbone(x))


model = Net()
# pretend the backbone was pretrained; fine-tune on a 5-class task
model.backbone.requires_grad_(False)
model.head = nn.Linear(32, 5)
optimizer = torch.optim.Adam(model.head.parameters(), lr=1e-2)

backbone_before = {k: v.clone() for k, v in model.backbone.state_dict().items()}
head_before = model.head.weight.detach().clone()
images, labels = torch.randn(32, 3, 16, 16), torch.randint(0, 5, (32,))

for epoch in range(4):
    model.train()
    model.backbone.eval()  # keep the frozen BatchNorm statistics
    loss = F.cross_entropy(model(images), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"epoch {epoch}: loss={loss.item():.4f}")

unchanged = all(torch.equal(v, model.backbone.state_dict()[k]) for k, v in backbone_before.items())
print("backbone unchanged:", unchanged, " head changed:", not torch.equal(head_before, model.head.weight))
