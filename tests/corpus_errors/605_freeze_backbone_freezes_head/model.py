"""Case 605 - freeze_backbone() freezes every parameter, head included (model module)

Source: pytorch/pytorch test/test_autograd.py, test_backward_badcalls (assertRaisesRegex "does not require grad")
Category: requires-grad

Reported symptom:
    RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn

Root cause:
    Classifier.freeze_backbone loops over self.parameters() instead of
    self.backbone.parameters(), so the classification head is frozen as well. With
    no parameter requiring grad and an input that does not require grad, the loss
    is a constant with no grad_fn and backward() refuses it.

Ground truth a good tool should report:
    The loop in freeze_backbone (`for p in self.parameters()`) should iterate over
    self.backbone.parameters(); the error is raised at loss.backward() in train.py.
"""
from torch import nn


class Classifier(nn.Module):
    def __init__(self, in_dim=16, hidden=32, classes=4):
        super().__init__()
        self.backbone = nn.Sequential(
            nn.Linear(in_dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU()
        )
        self.head = nn.Linear(hidden, classes)

    def freeze_backbone(self):
        for p in self.parameters():  # <- CAUSE: freezes the head too
            p.requires_grad_(False)

    def forward(self, x):
        return self.head(self.backbone(x))
