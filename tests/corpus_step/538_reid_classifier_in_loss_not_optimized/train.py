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

from model import TinyTracker
from trainer import BaseTrainer

torch.manual_seed(0)

ids = torch.randint(0, 10, (600,))
prototypes = torch.randn(10, 24)
x = prototypes[ids] + 0.5 * torch.randn(600, 24)
hm_target = (x[:, 0] > 0).float()

trainer = BaseTrainer(TinyTracker())
classifier_before = trainer.loss.classifier.weight.detach().clone()

for step in range(40):
    idx = torch.randint(0, 600, (64,))
    det_loss, id_loss = trainer.run_batch(x[idx], hm_target[idx], ids[idx])

moved = (trainer.loss.classifier.weight.detach() - classifier_before).abs().max().item()
print(f"det {det_loss:.4f}  id {id_loss:.4f}  classifier moved {moved:.6f}  s_id {trainer.loss.s_id.item():.3f}")
