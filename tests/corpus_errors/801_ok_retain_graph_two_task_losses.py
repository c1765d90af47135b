"""Case 801 - two task losses backpropagated separately through a shared encoder, done right

Source: pytorch/pytorch test/test_autograd.py, test_backward_twice_retained_graph_with_saved_values (the passing counterpart of test_backward_twice_with_saved_values)
Category: correct

Reported symptom:
    none: the script runs to completion without error or warning.

Root cause:
    No bug. The first backward keeps the shared encoder graph with
    retain_graph=True, the second (last) backward frees it; gradients of both tasks
    accumulate in the encoder before a single optimizer step. A fresh graph is built
    every iteration, so nothing is reused across steps.

Ground truth a good tool should report:
    Nothing.

EXPECT: no findings
"""
import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(0)

encoder = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 32), nn.Tanh())
cls_head = nn.Linear(32, 3)
reg_head = nn.Linear(32, 1)
params = [*encoder.parameters(), *cls_head.parameters(), *reg_head.parameters()]
opt = torch.optim.Adam(params, lr=1e-3)

for step in range(3):
    x = torch.randn(24, 16)
    y_cls, y_reg = torch.randint(0, 3, (24,)), torch.randn(24)
    feats = encoder(x)
    loss_cls = F.cross_entropy(cls_head(feats), y_cls)
    loss_reg = F.mse_loss(reg_head(feats).squeeze(1), y_reg)
    opt.zero_grad()
    loss_cls.backward(retain_graph=True)
    enc_grad_cls = encoder[0].weight.grad.norm().item()
    loss_reg.backward()
    opt.step()
    print(f"step {step} cls {loss_cls.item():.3f} reg {loss_reg.item():.3f} enc grad (cls) {enc_grad_cls:.3f}")
