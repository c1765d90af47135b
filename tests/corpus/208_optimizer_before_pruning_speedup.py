"""Case 208 - channel pruning replaces layers after the optimizer was built: fine-tuning
updates nothing in the pruned layers

Source: https://github.com/microsoft/nni/issues/4521
        "The parameters are not updated when the pruned model is finetuned"
        (maintainer: speedup "will replace the layers in the original model with
        smaller ones ... So the parameters registered in the optimizer are outdated";
        the reporter "solved this problem by redefining an optimizer").
Category: optimizer-holds-stale-parameters (silent)

Reported symptom:
    No error; the loss during fine-tuning barely moves and the weights of the pruned
    layers are identical before and after fine-tuning.

Root cause:
    `optimizer` was created from model.parameters() of the dense model.  The
    speed-up step assigns new nn.Linear modules (model.fc1, model.fc2) holding the
    kept rows/columns; their Parameters are new objects that the optimizer has never
    seen.  loss.backward() fills their .grad, but optimizer.step() only updates the
    old, now unused tensors (and the untouched `head`).

Ground truth a good tool should report:
    After optimizer.step(), model.fc1.weight / model.fc2.weight have a gradient but
    are not in any optimizer param_group (the optimizer holds the replaced layers'
    parameters, created before the speed-up).  Fix: build the optimizer after
    speed-up.
    EXPECT: kind=param_not_in_optimizer; params=fc1.weight,fc1.bias,fc2.weight,fc2.bias;
            cause_line=72; created_line=67,68; read_line=83

Observed (torch 2.13, CPU):
    exit code: 0
    stdout:
        kept 16 of 32 hidden units
        step 0: loss=1.6055
        ... (steps 1-3)
        step 4: loss=1.5897
        fc1.weight changed during fine-tuning: False
        fc2.weight changed during fine-tuning: False
        head.weight changed during fine-tuning: True
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MLP(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.fc1 = nn.Linear(20, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.head = nn.Linear(hidden, 5)

    def forward(self, x):
        return self.head(F.relu(self.fc2(F.relu(self.fc1(x)))))


def speedup(model, keep):
    """Physically remove pruned hidden units of fc1 (rows) and fc2 (columns)."""
    fc1, fc2 = model.fc1, model.fc2
    new_fc1 = nn.Linear(fc1.in_features, len(keep))
    new_fc2 = nn.Linear(len(keep), fc2.out_features)
    with torch.no_grad():
        new_fc1.weight.copy_(fc1.weight[keep]); new_fc1.bias.copy_(fc1.bias[keep])
        new_fc2.weight.copy_(fc2.weight[:, keep]); new_fc2.bias.copy_(fc2.bias)
    model.fc1 = new_fc1  # <- CREATED
    model.fc2 = new_fc2  # <- CREATED


model = MLP()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)  # <- CAUSE: built for the dense layers
keep = model.fc1.weight.norm(dim=1).argsort(descending=True)[:16]  # L2-norm channel pruning
speedup(model, keep)
print("kept", len(keep), "of 32 hidden units")

x, y = torch.randn(64, 20), torch.randint(0, 5, (64,))
snapshot = {n: p.detach().clone() for n, p in model.named_parameters()}
for step in range(5):
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()  # <- READ
    print(f"step {step}: loss={loss.item():.4f}")

for name in ("fc1.weight", "fc2.weight", "head.weight"):
    changed = not torch.equal(snapshot[name], dict(model.named_parameters())[name])
    print(f"{name} changed during fine-tuning: {changed}")
