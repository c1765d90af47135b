"""Case 149 - validation relies on model.eval() to stop autograd; graphs pile up per batch

Source: https://github.com/skorch-dev/skorch/issues/218 "Should use torch.no_grad in
        validation_step()?" (PointNet; "After each validation batch the GPU memory
        consumption increases until nothing is left"; wrapping validation in
        torch.no_grad() solved it; fixed by https://github.com/skorch-dev/skorch/pull/219);
        same report: https://github.com/hszhao/semseg/issues/60
Category: work that is thrown away (graphs built and kept, never backpropagated)

Reported symptom:
    RuntimeError: CUDA out of memory during validation (training with the same batch
    size fits).  Memory grows with every validation batch.

Root cause:
    model.eval() only switches Dropout/BatchNorm behaviour; it does not disable
    autograd.  Every validation forward records a graph and saves activations for a
    backward that never comes, and because the predictions are collected for the
    epoch metric, every batch's graph stays alive until the end of validation.

Ground truth a good tool should report:
    The forward at line 74 runs with grad mode enabled in a loop that never calls
    backward(); its output (requires_grad=True, grad_fn=...) is appended to
    `all_logits` (line 75) and keeps one graph per batch alive.  `model.eval()`
    (line 70) is relied on to turn gradients off; wrap the loop in torch.no_grad()
    (or torch.inference_mode()).
    EXPECT: kind=graph_built_without_backward; cause_line=74,70; kept_line=75

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        collected logits: requires_grad=True grad_fn=AddmmBackward0
        graph nodes kept alive after 1 batch: 18
        graph nodes kept alive after 8 batches: 88
        val accuracy 0.250
"""
import torch
import torch.nn as nn

torch.manual_seed(0)


class PointNetLite(nn.Module):
    """Shared per-point MLP, max-pool over points, classifier head."""

    def __init__(self, n_classes=4):
        super().__init__()
        self.point_mlp = nn.Sequential(nn.Linear(3, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Linear(32, 64))
        self.head = nn.Sequential(nn.Dropout(0.3), nn.Linear(64, n_classes))

    def forward(self, pts):  # pts: (batch, points, 3)
        b, n, _ = pts.shape
        feats = self.point_mlp(pts.reshape(b * n, 3)).reshape(b, n, -1)
        return self.head(feats.max(dim=1).values)


def graph_size(tensors):
    seen, stack = set(), [t.grad_fn for t in tensors if t.grad_fn is not None]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        stack.extend(n for n, _ in node.next_functions)
    return len(seen)


model = PointNetLite()
val_set = [(torch.randn(4, 64, 3), torch.randint(0, 4, (4,))) for _ in range(8)]

model.eval()  # <- CAUSE: relied on as if it disabled autograd
all_logits, all_labels = [], []
sizes = []
for points, labels in val_set:
    logits = model(points)  # <- CAUSE: validation forward records a graph; wrap in torch.no_grad()
    all_logits.append(logits)  # <- SAVED: keeps every batch's graph alive
    all_labels.append(labels)
    sizes.append(graph_size(all_logits))

print(f"collected logits: requires_grad={all_logits[0].requires_grad} grad_fn={type(all_logits[0].grad_fn).__name__}")
print(f"graph nodes kept alive after 1 batch: {sizes[0]}")
print(f"graph nodes kept alive after {len(sizes)} batches: {sizes[-1]}")
acc = (torch.cat(all_logits).argmax(1) == torch.cat(all_labels)).float().mean()
print(f"val accuracy {acc.item():.3f}")
