"""Case 165 - @torch.no_grad() on forward, "fixed" with loss.requires_grad = True: nothing trains

Source: https://github.com/ronghuaiyang/arcface-pytorch/issues/56
        "RuntimeError: element 0 of tensors does not require grad ... to solve this
        problem, i add a line code in the train.py: loss.requires_grad = True ...
        but when i train, the loss is not decline, and the acc is always zero"
        (the same band-aid is suggested in https://github.com/mazurowski-lab/finetune-SAM/issues/26)
Category: grad-mode (no_grad decorator) + requires_grad band-aid

Reported symptom:
    First "RuntimeError: element 0 of tensors does not require grad and does
    not have a grad_fn" at loss.backward().  After adding
    `loss.requires_grad = True` the error is gone, but the loss never goes
    down and the accuracy stays flat.

Root cause:
    The model's forward carries `@torch.no_grad()` (copied from the helper
    used to extract embeddings for the gallery), so every output is computed
    with grad mode off and the loss has no grad_fn.  Setting
    `loss.requires_grad = True` turns the loss into a new leaf that is
    connected to nothing: backward() succeeds and touches no parameter, every
    .grad stays None and the optimizer skips every parameter.

Ground truth a good tool should report:
    The loss at line 70 was computed without a graph because `forward` runs
    under the `@torch.no_grad()` decorator at line 55; `loss.requires_grad = True`
    at line 71 only hides the error: backward at line 72 reaches no parameter
    (all .grad None).  Remove the decorator (and the band-aid).
    EXPECT: kind=no_grad_forward; params=all; cause_line=55; bandaid_line=71

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        epoch  0 loss 4.0097 acc 0.250
        epoch  5 loss 4.0097 acc 0.250
        epoch 10 loss 4.0097 acc 0.250
        epoch 15 loss 4.0097 acc 0.250
        epoch 19 loss 4.0097 acc 0.250
        backbone[0].weight.grad: None
        backbone[0].weight changed: False
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class EmbeddingClassifier(nn.Module):
    def __init__(self, n_in=20, dim=8, n_ids=4):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(n_in, 32), nn.PReLU(), nn.Linear(32, dim))
        self.centers = nn.Parameter(torch.randn(n_ids, dim))

    @torch.no_grad()  # <- CAUSE: the whole forward runs with grad mode off
    def forward(self, x):
        emb = F.normalize(self.backbone(x), dim=1)
        return 10.0 * emb @ F.normalize(self.centers, dim=1).t()  # scaled cosine logits


model = EmbeddingClassifier()
optimizer = torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
x = torch.randn(64, 20)
labels = torch.randint(0, 4, (64,))
first_weight = model.backbone[0].weight.detach().clone()

for epoch in range(20):
    optimizer.zero_grad()
    logits = model(x)
    loss = F.cross_entropy(logits, labels)
    loss.requires_grad = True  # <- CREATED: band-aid, a fresh leaf connected to nothing
    loss.backward()
    optimizer.step()
    if epoch % 5 == 0 or epoch == 19:
        acc = (logits.argmax(1) == labels).float().mean().item()
        print(f"epoch {epoch:2d} loss {loss.item():.4f} acc {acc:.3f}")

print("backbone[0].weight.grad:", model.backbone[0].weight.grad)
print("backbone[0].weight changed:", not torch.equal(first_weight, model.backbone[0].weight.detach()))
