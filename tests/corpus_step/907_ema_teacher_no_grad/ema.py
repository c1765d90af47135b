"""Case 907 - mean-teacher EMA updated under no_grad, parameters and buffers (correct)

Source: https://github.com/saltoricristiano/cosmix-uda/issues/21
        "You update only the parameters, but forget the model **buffers**."
Category: correct (invariant 4)
EXPECT: no findings

Reported symptom:
    None. Semi-supervised mean teacher: the student is trained with a supervised
    loss plus a consistency loss against an EMA teacher.

Root cause:
    None. The teacher is a deep copy with requires_grad=False, is not in the
    optimizer, produces targets under torch.no_grad(), and is updated after each
    student step by an EMA of the student's parameters and buffers inside
    torch.no_grad(). Teacher weights changing outside any optimizer is intended.

Ground truth a good tool should report:
    Nothing.
"""
import copy

import torch


class EMATeacher:
    def __init__(self, student, decay=0.9):
        self.decay = decay
        self.model = copy.deepcopy(student)
        self.model.requires_grad_(False)

    @torch.no_grad()
    def update(self, student):
        for t, s in zip(self.model.parameters(), student.parameters()):
            t.mul_(self.decay).add_(s.detach(), alpha=1 - self.decay)
        for t, s in zip(self.model.buffers(), student.buffers()):
            if t.is_floating_point():
                t.mul_(self.decay).add_(s, alpha=1 - self.decay)
            else:
                t.copy_(s)

    @torch.no_grad()
    def predict(self, x):
        self.model.eval()
        return torch.softmax(self.model(x), dim=1)
