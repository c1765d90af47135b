"""Case 940 - one epoch function for both phases, grad mode scoped with `with` (correct)

Source: https://pytorch.org/tutorials/beginner/transfer_learning_tutorial.html
        "with torch.set_grad_enabled(phase == 'train'):"
Category: correct (invariant 5)
EXPECT: no findings

Reported symptom:
    None. The tutorial's train_model() runs a 'train' and a 'val' phase per
    epoch through the same code, switching model.train()/model.eval() at the
    start of each phase and the grad mode with set_grad_enabled in a `with`.

Root cause:
    None. set_grad_enabled is used as a context manager, so the grad mode comes
    back when the block ends; every phase sets its own train/eval mode. A
    helper also switches the default dtype to float64 for an exact metric and
    puts it back.

Ground truth a good tool should report:
    Nothing: every switch is scoped or set again before the work that needs it.
"""
import torch
import torch.nn as nn

torch.manual_seed(0)

x = torch.randn(384, 10)
y = (x[:, 0] - x[:, 1] > 0).long()
loaders = {
    "train": [(x[i:i + 32], y[i:i + 32]) for i in range(0, 256, 32)],
    "val": [(x[i:i + 32], y[i:i + 32]) for i in range(256, 384, 32)],
}
model = nn.Sequential(nn.Linear(10, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Dropout(0.2), nn.Linear(32, 2))
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)


def exact_accuracy(logits, labels):
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        hits = torch.tensor((logits.argmax(1) == labels).tolist())
        return float(hits.sum() / torch.tensor(float(len(labels))))
    finally:
        torch.set_default_dtype(previous)


def run_phase(phase):
    if phase == "train":
        model.train()
    else:
        model.eval()
    total = 0.0
    for inputs, labels in loaders[phase]:
        optimizer.zero_grad()
        with torch.set_grad_enabled(phase == "train"):
            outputs = model(inputs)
            loss = criterion(outputs, labels)
            if phase == "train":
                loss.backward()
                optimizer.step()
        total += exact_accuracy(outputs.detach(), labels)
    return total / len(loaders[phase])


for epoch in range(4):
    for phase in ("train", "val"):
        acc = run_phase(phase)
    print(f"epoch {epoch}: val acc {acc:.3f}")
