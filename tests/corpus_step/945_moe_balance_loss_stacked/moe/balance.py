import torch

from moe.layers import MoEBlock


def _aux_losses(model):
    return [m.aux_loss for m in model.modules() if isinstance(m, MoEBlock)]


def balance_loss(model):
    return torch.stack(_aux_losses(model)).mean()


def balance_table(model):
    return torch.tensor([loss.item() for loss in _aux_losses(model)])
