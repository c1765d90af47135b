"""Case 538 - the re-ID classifier and the uncertainty weights live in the loss module, which no optimizer holds

Source: https://github.com/ifzhang/FairMOT/issues/223
        "The optimizer seems only optimizes the parameters in DLASeg and does not optimize
        the parameters in MotLoss." (maintainer: "I add them to the optimizer now and it can
        improve the performance of re-ID")
Category: 2 - every gradient backward produces is consumed

Reported symptom:
    The joint detection + re-ID tracker trains, but the identity embedding is
    poor: the re-ID loss decreases far less than expected.

Root cause:
    MotLoss owns the identity classifier (nn.Linear from the embedding to the
    identities) and the learnable task-uncertainty weights s_det / s_id. The
    trainer builds its optimizer from model.parameters() only, so the classifier
    stays at its random initialisation and the loss weights never adapt; their
    gradients are computed at every backward and never applied.

Ground truth a good tool should report:
    The parameters of MotLoss (classifier.weight/bias, s_det, s_id) receive
    gradients but belong to no optimizer; the optimizer is built in trainer.py
    from the model's parameters only (the `self.optimizer = torch.optim.Adam(...)`
    line in BaseTrainer.__init__).
"""
import torch.nn as nn


class TinyTracker(nn.Module):
    """A backbone with a detection head (heatmap logits) and an identity-embedding head."""

    def __init__(self, d_in=24, hidden=48, emb_dim=16):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.hm = nn.Linear(hidden, 1)
        self.id = nn.Linear(hidden, emb_dim)

    def forward(self, x):
        h = self.backbone(x)
        return {"hm": self.hm(h).squeeze(1), "id": self.id(h)}
