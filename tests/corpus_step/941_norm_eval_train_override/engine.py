"""Case 941 - a backbone whose train() keeps its BatchNorm layers in eval mode (correct)

Source: https://mmdetection.readthedocs.io/en/latest/api.html (ResNet, norm_eval)
Category: correct (invariant 5)
EXPECT: no findings

(see model.py)
"""
import torch
import torch.nn.functional as F


def train_one_epoch(model, optimizer, batches):
    model.train()
    for x, y in batches:
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss.item()


@torch.no_grad()
def evaluate(model, x, y):
    model.eval()
    return (model(x).argmax(1) == y).float().mean().item()
