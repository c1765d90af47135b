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
import torch
import torch.nn as nn
import torch.nn.functional as F


class MotLoss(nn.Module):
    """Detection loss plus identity classification, weighted by learned uncertainties."""

    def __init__(self, emb_dim=16, n_ids=10):
        super().__init__()
        self.classifier = nn.Linear(emb_dim, n_ids)
        self.emb_scale = 2.0
        self.s_det = nn.Parameter(-1.85 * torch.ones(1))
        self.s_id = nn.Parameter(-1.05 * torch.ones(1))

    def forward(self, outputs, hm_target, ids):
        det_loss = F.binary_cross_entropy_with_logits(outputs["hm"], hm_target)
        emb = self.emb_scale * F.normalize(outputs["id"])
        id_loss = F.cross_entropy(self.classifier(emb), ids)
        loss = torch.exp(-self.s_det) * det_loss + torch.exp(-self.s_id) * id_loss + (self.s_det + self.s_id)
        return 0.5 * loss.squeeze(), det_loss, id_loss
