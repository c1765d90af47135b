"""Case 147 - layer frozen with requires_grad_(False) after the optimizer was built keeps moving

Source: https://discuss.pytorch.org/t/why-there-is-still-a-small-change-in-frozen-layer-parameters/153740
        "Why there is still a small change in frozen layer parameters?" (fc1 frozen by
        setting requires_grad = False mid-training, its weights still change; the
        poster's fix: "I also need to set param.grad=None")
Category: training-step protocol (freezing after the optimizer exists)

Reported symptom:
    No error.  The layer that was frozen (requires_grad = False) still changes a
    little at every step of the "frozen" phase.

Root cause:
    The optimizer was built over all parameters before the freeze.  Freezing stops
    backward() from writing new gradients, but the frozen parameters keep a zero
    (not None) .grad because zero_grad(set_to_none=False) zeroes it in place, so
    SGD still updates them: the momentum buffer from the unfrozen phase and the
    weight-decay term move the weights without any gradient.

Ground truth a good tool should report:
    `encoder.*` parameters set requires_grad=False at line 71 are still in the
    optimizer's param_groups with a zero `.grad` (zeroed in place at line 61, not
    set to None) and a momentum buffer, so `optimizer.step()` (line 64) keeps
    changing them.  Fix: also set `p.grad = None` when freezing, or zero_grad()
    with set_to_none=True (or rebuild the optimizer without them).
    EXPECT: kind=frozen_param_updated; params=encoder.0.weight,encoder.0.bias;
            cause_line=71,61; step_line=64

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        encoder.0.weight requires_grad: False
        frozen phase step 0: encoder weights moved by 0.04923
        frozen phase step 1: encoder weights moved by 0.04480
        frozen phase step 2: encoder weights moved by 0.04089
        encoder changed during the frozen phase: True
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
        self.head = nn.Linear(16, 4)

    def forward(self, x):
        return self.head(self.encoder(x))


model = Classifier()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-2)
data = [(torch.randn(10, 8), torch.randint(0, 4, (10,))) for _ in range(6)]


def train_step(x, y):
    optimizer.zero_grad(set_to_none=False)  # <- CAUSE: keeps a zero .grad on frozen params, so step() still updates them
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()


for x, y in data[:3]:  # warm-up: the whole network trains
    train_step(x, y)

for p in model.encoder.parameters():
    p.requires_grad_(False)  # <- CAUSE: frozen after the optimizer was built; .grad and momentum stay
print("encoder.0.weight requires_grad:", model.encoder[0].weight.requires_grad)

frozen_before = model.encoder[0].weight.detach().clone()
for k, (x, y) in enumerate(data[3:]):  # fine-tune the head only
    w0 = model.encoder[0].weight.detach().clone()
    train_step(x, y)
    print(f"frozen phase step {k}: encoder weights moved by {(model.encoder[0].weight - w0).norm().item():.5f}")

print("encoder changed during the frozen phase:", not torch.equal(frozen_before, model.encoder[0].weight))
