"""Case 812 - mark_dirty Function applied to a clone, distillation target detached, table filled before requires_grad

Source: pytorch/pytorch test/test_autograd.py, test_return_duplicate_inplace (in-place Function on x.clone()) and test_no_requires_grad_inplace (fill first, then requires_grad)
Category: correct

Reported symptom:
    none: the script runs to completion without error or warning.

Root cause:
    No bug. The in-place clamp Function (which calls ctx.mark_dirty) is applied to
    self.weight.clone(), a non-leaf, never to the Parameter itself; the teacher's
    logits are cut from the graph with .detach() instead of requires_grad_(False);
    the positional table is filled through its views before it is made trainable.

Ground truth a good tool should report:
    Nothing.

EXPECT: no findings
"""
import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(0)


class HardClamp_(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, bound):
        inside = x.abs() <= bound
        x.clamp_(-bound, bound)
        ctx.mark_dirty(x)
        ctx.save_for_backward(inside)
        return x

    @staticmethod
    def backward(ctx, grad_out):
        (inside,) = ctx.saved_tensors
        return grad_out * inside, None


class BoundedLinear(nn.Linear):
    def forward(self, x):
        return F.linear(x, HardClamp_.apply(self.weight.clone(), 0.5), self.bias)


table = torch.zeros(6, 4)
table[:, 0::2].copy_(torch.sin(torch.arange(6.0)).unsqueeze(1).expand(6, 2))
table[:, 1::2].copy_(torch.cos(torch.arange(6.0)).unsqueeze(1).expand(6, 2))
table.requires_grad_(True)

teacher = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3))
student = nn.Sequential(BoundedLinear(4, 8), nn.ReLU(), nn.Linear(8, 3))
opt = torch.optim.Adam([table, *student.parameters()], lr=1e-2)

x = torch.randn(6, 4)
for step in range(3):
    teacher_logits = teacher(x + table).detach()
    student_logits = student(x + table)
    loss = F.kl_div(F.log_softmax(student_logits, dim=1), F.softmax(teacher_logits, dim=1), reduction="batchmean")
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} kd loss {loss.item():.4f}")
