"""Case 221 - semantic segmentation validate(): model.eval() but no torch.no_grad(), and
the predictions are kept for the mIoU computation

Source: https://github.com/hszhao/semseg/issues/60 '"out of memory" during validation'
        (validate() in tool/train.py calls model.eval() and then `output = model(input)`
        without torch.no_grad(); memory grows during validation until OOM; fix: wrap
        the forward in `with torch.no_grad():`)
Category: silent wasted work (graphs built and retained during evaluation)

Reported symptom:
    Training is fine; the first validation pass runs out of GPU memory.

Root cause:
    model.eval() only switches BatchNorm/Dropout behaviour; it does not disable
    autograd.  Every validation forward records a graph and saves activations, and
    because the logits of each batch are appended to a list for the confusion matrix,
    all of those graphs stay alive until the end of validation.  Nobody ever calls
    backward on them.

Ground truth a good tool should report:
    Forward at line 59 runs with grad mode enabled inside an evaluation loop
    (model.training == False, no backward follows); its outputs, which require grad and
    carry graphs, are retained at line 60 for all validation batches.  Fix:
    `with torch.no_grad():` (or torch.inference_mode()) around the validation loop.
    EXPECT: kind=eval_graph_retained; cause_line=59; retained_line=60

Observed (torch 2.13, CPU):
    exit code: 0
    stdout:
        epoch 0: train loss=1.4261
        val mIoU=0.121; outputs holding a graph: 5/5; first
          grad_fn=UpsampleBilinear2DBackward0
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
N_CLASSES = 4


class TinySegNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
                                 nn.Conv2d(16, 16, 3, stride=2, padding=1), nn.BatchNorm2d(16), nn.ReLU())
        self.dropout = nn.Dropout2d(0.1)
        self.cls = nn.Conv2d(16, N_CLASSES, 1)

    def forward(self, x):
        out = self.cls(self.dropout(self.enc(x)))
        return F.interpolate(out, size=x.shape[-2:], mode="bilinear", align_corners=False)


def validate(model, val_loader):
    model.eval()
    outputs, targets = [], []
    for images, target in val_loader:
        output = model(images)  # <- CAUSE: autograd still records (no torch.no_grad)
        outputs.append(output)  # <- READ: keeps each batch's graph alive
        targets.append(target)
    pred = torch.cat(outputs).argmax(1)
    target = torch.cat(targets)
    ious = [((pred == c) & (target == c)).sum() / ((pred == c) | (target == c)).sum().clamp(min=1)
            for c in range(N_CLASSES)]
    n_graphs = sum(o.grad_fn is not None for o in outputs)
    print(f"val mIoU={torch.stack(ious).mean().item():.3f}; outputs holding a graph: {n_graphs}/{len(outputs)}"
          f"; first grad_fn={type(outputs[0].grad_fn).__name__}")


model = TinySegNet()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
train_loader = [(torch.randn(4, 3, 32, 32), torch.randint(0, N_CLASSES, (4, 32, 32))) for _ in range(3)]
val_loader = [(torch.randn(4, 3, 32, 32), torch.randint(0, N_CLASSES, (4, 32, 32))) for _ in range(5)]

for epoch in range(1):
    model.train()
    for images, target in train_loader:
        loss = F.cross_entropy(model(images), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch}: train loss={loss.item():.4f}")
    validate(model, val_loader)
