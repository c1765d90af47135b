"""Correct 328 - inference_mode for evaluation and teacher predictions, training on cloned pseudo-labels

Pattern: https://docs.pytorch.org/docs/stable/notes/autograd.html#inference-mode
         (inference tensors must not be used in autograd-recorded computation;
         "make a clone to get a normal tensor")
Category: correct (torch.inference_mode used only where no gradient is needed)

What it does:
    Self-training of a student on unlabeled data.  `evaluate()` is decorated
    with @torch.inference_mode() and returns Python floats.  `teacher_predict()`
    is also decorated with @torch.inference_mode(): the soft pseudo-labels it
    returns are inference tensors, so the training loop clones them (outside
    inference mode) into normal tensors before they enter the loss, which
    saves its target for backward.  Training is interleaved with evaluation;
    the model's parameters are never created or modified inside inference
    mode, and the teacher is an EMA copy updated under torch.no_grad().

Why a naive tool might flag it:
    Inference tensors flow into a training step (after .clone()), the
    decorated functions are called between training iterations, the teacher's
    parameters are updated in place, the student's loss uses targets
    computed by a model.

Ground truth a good tool should report:
    Nothing.
    EXPECT: no findings

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        pseudo-labels are inference tensors: True; clone is: False
        epoch 0 val acc 0.88
        epoch 1 val acc 0.90
        epoch 2 val acc 0.93
"""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

student = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 2))
teacher = copy.deepcopy(student)
teacher.requires_grad_(False)
optimizer = torch.optim.Adam(student.parameters(), lr=1e-2)

w_true = torch.randn(8)
labeled_x = torch.randn(16, 8)
labeled_y = (labeled_x @ w_true > 0).long()
unlabeled_x = torch.randn(64, 8)
val_x = torch.randn(40, 8)
val_y = (val_x @ w_true > 0).long()


@torch.inference_mode()
def evaluate(model):
    model.eval()
    acc = (model(val_x).argmax(1) == val_y).float().mean().item()
    model.train()
    return acc


@torch.inference_mode()
def teacher_predict(x, temperature=0.5):
    return F.softmax(teacher(x) / temperature, dim=1)


for epoch in range(3):
    for it in range(10):
        soft = teacher_predict(unlabeled_x)
        targets = soft.clone()                       # normal tensor, usable by autograd
        if epoch == 0 and it == 0:
            print(f"pseudo-labels are inference tensors: {soft.is_inference()}; "
                  f"clone is: {targets.is_inference()}")
        sup = F.cross_entropy(student(labeled_x), labeled_y)
        unsup = F.cross_entropy(student(unlabeled_x), targets)
        loss = sup + 0.5 * unsup
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        with torch.no_grad():
            for t_p, s_p in zip(teacher.parameters(), student.parameters()):
                t_p.mul_(0.9).add_(s_p, alpha=0.1)
    print(f"epoch {epoch} val acc {evaluate(student):.2f}")
