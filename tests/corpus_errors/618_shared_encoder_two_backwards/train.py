"""Case 618 - multi-task training with a shared encoder (entry point)

Source: pytorch/pytorch test/test_autograd.py, test_backward_twice_with_saved_values (assertRaisesRegex "Specify retain_graph=True")
Category: graph-freed

Reported symptom:
    RuntimeError: Trying to backward through the graph a second time (or directly access saved tensors after they have already been freed). Saved intermediate values of the graph are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if you need to access saved tensors after calling backward.

Root cause:
    utils/trainer.py calls backward() on the classification loss and then on the
    regression loss; both go through the same encoder graph, which the first call
    frees.

Ground truth a good tool should report:
    utils/trainer.py, the first `loss_cls.backward()` (needs retain_graph=True, or
    backpropagate loss_cls + loss_reg once); raised at `loss_reg.backward()`.
"""
import torch

from model import MultiTaskNet
from utils.trainer import train_step

torch.manual_seed(0)

model = MultiTaskNet()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)

for step in range(3):
    x = torch.randn(24, 16)
    y_cls = torch.randint(0, 3, (24,))
    y_reg = torch.randn(24)
    l_cls, l_reg = train_step(model, opt, x, y_cls, y_reg)
    print(f"step {step} cls {l_cls:.3f} reg {l_reg:.3f}")
