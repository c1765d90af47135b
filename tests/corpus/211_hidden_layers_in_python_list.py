"""Case 211 - hidden layers kept in a plain Python list: invisible to parameters(), so
the optimizer never updates them

Source: https://github.com/pytorch/pytorch/issues/715
        "Module: parameters are not included if the module is initialized in a list"
        (SNLI model: `self.hids = []` filled with nn.Linear in a loop; apaszke: "wrap
        them in nn.ModuleList"); also https://github.com/pytorch/pytorch/issues/666.
Category: parameters-not-registered (silent)

Reported symptom:
    No error.  print(model) shows only the classifier; the hidden layers keep their
    random initialisation for the whole training run and accuracy is poor.

Root cause:
    nn.Module registers sub-modules only when they are assigned as attributes (or
    held by ModuleList/ModuleDict/Sequential).  Layers stored in a Python list are
    not registered, so model.parameters() -- and therefore the optimizer -- sees
    only `classifier`.  The hidden layers still receive .grad from backward, but no
    optimizer step ever applies it (they are also skipped by .to(), state_dict(),
    train()/eval()).

Ground truth a good tool should report:
    Tensors hids[0].weight ... hids[2].bias require grad and get a gradient in
    backward but are not parameters of `model` and are in no optimizer param_group;
    they stay at their initial value.  Fix: self.hids = nn.ModuleList(...).
    EXPECT: kind=param_not_in_optimizer; params=hids.*; cause_line=48; read_line=76

Observed (torch 2.13, CPU):
    exit code: 0
    stdout:
        parameters seen by the optimizer: 2 (classifier only)
        epoch 0: loss=1.0815
        epoch 1: loss=1.0802
        epoch 2: loss=1.0787
        hidden layer 0 weight changed: False   has grad: True
        classifier weight changed: True
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SNLINet(nn.Module):
    def __init__(self, n_in=32, n_hid=64, n_layers=3):
        super().__init__()
        self.hids = []  # <- CAUSE: plain list, the layers are not registered
        indim = 2 * n_in
        for _ in range(n_layers):
            self.hids.append(nn.Linear(indim, n_hid))
            indim = n_hid
        self.classifier = nn.Linear(n_hid, 3)

    def forward(self, premise, hypothesis):
        h = torch.cat([premise, hypothesis], dim=1)
        for layer in self.hids:
            h = torch.tanh(layer(h))
        return self.classifier(h)


def train(epochs=3):
    model = SNLINet()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    print("parameters seen by the optimizer:", len(optimizer.param_groups[0]["params"]), "(classifier only)")
    premise, hypothesis = torch.randn(128, 32), torch.randn(128, 32)
    label = torch.randint(0, 3, (128,))
    hid0 = model.hids[0].weight.detach().clone()
    cls0 = model.classifier.weight.detach().clone()
    for epoch in range(epochs):
        for i in range(0, 128, 32):
            logits = model(premise[i:i + 32], hypothesis[i:i + 32])
            loss = F.cross_entropy(logits, label[i:i + 32])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()  # <- READ
        print(f"epoch {epoch}: loss={loss.item():.4f}")
    print("hidden layer 0 weight changed:", not torch.equal(hid0, model.hids[0].weight),
          "  has grad:", model.hids[0].weight.grad is not None)
    print("classifier weight changed:", not torch.equal(cls0, model.classifier.weight))


train()
