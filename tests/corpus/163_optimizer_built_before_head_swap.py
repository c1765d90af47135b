"""Case 163 - classifier head replaced after the optimizer was built: the new head is never trained

Source: https://github.com/microsoft/nni/issues/4521
        "The parameters are not updated when the pruned model is finetuned"
        (model surgery replaced layers after the optimizer had been created:
        "the parameters registered in the optimizer are outdated ... reinitializing
        a new optimizer" fixed it); same question:
        https://github.com/pytorch/pytorch/issues/54765
Category: wiring (optimizer holds stale parameters)

Reported symptom:
    No error.  Fine-tuning barely improves; the freshly initialised head keeps
    its random weights, while the backbone drifts.

Root cause:
    `torch.optim.SGD(net.parameters(), ...)` captures the Parameter objects
    that exist at that moment.  `net.fc = nn.Linear(...)` afterwards registers
    brand-new Parameters on the module, which the optimizer has never seen:
    backward fills their .grad (and `optimizer.zero_grad()` never clears it),
    but `optimizer.step()` never updates them.  The old head's parameters, which
    the optimizer does hold, are no longer used and get no gradient.

Ground truth a good tool should report:
    `fc.weight` and `fc.bias` receive gradients but are in no optimizer; the
    optimizer built at line 63 holds the previous head's tensors, which were
    replaced at line 66 and now get no gradient.  Build the optimizer after the
    surgery (or add the new parameters to it).
    EXPECT: kind=param_not_in_optimizer; params=fc.weight,fc.bias;
            cause_line=63,66

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        epoch  0 loss 1.0739
        epoch 14 loss 1.0402
        new fc.weight held by the optimizer: False
        new fc.weight changed: False
        conv1.weight changed: True
        fc.weight.grad norm (accumulated over 15 steps, never cleared): 1.086
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SmallConvNet(nn.Module):
    def __init__(self, n_classes):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.fc = nn.Linear(16, n_classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.relu(self.conv2(x)).mean(dim=(2, 3))
        return self.fc(x)


# "pretrained" 10-class model, re-purposed for a 3-class task
net = SmallConvNet(n_classes=10)
optimizer = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)  # <- CAUSE: captures the old fc

# new task: swap the classifier for a 3-way head
net.fc = nn.Linear(16, 3)  # <- CREATED: new Parameters, not in the optimizer

images = torch.randn(24, 1, 12, 12)
labels = torch.randint(0, 3, (24,))
new_head_before = net.fc.weight.detach().clone()
conv_before = net.conv1.weight.detach().clone()

for epoch in range(15):
    optimizer.zero_grad()
    loss = F.cross_entropy(net(images), labels)
    loss.backward()
    optimizer.step()
    if epoch in (0, 14):
        print(f"epoch {epoch:2d} loss {loss.item():.4f}")

held = {id(p) for g in optimizer.param_groups for p in g["params"]}
print("new fc.weight held by the optimizer:", id(net.fc.weight) in held)
print("new fc.weight changed:", not torch.equal(new_head_before, net.fc.weight.detach()))
print("conv1.weight changed:", not torch.equal(conv_before, net.conv1.weight.detach()))
print(f"fc.weight.grad norm (accumulated over 15 steps, never cleared): {net.fc.weight.grad.norm():.3f}")
