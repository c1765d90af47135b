"""Case 187 - gradients computed with torch.autograd.grad and never written to .grad
before optimizer.step().

Source: a frequent discuss.pytorch.org report (paraphrased): "my model does not train when
I compute gradients with autograd.grad".
Root cause: autograd.grad returns the gradients and leaves .grad untouched; the optimizer
steps on parameters without gradients and does nothing. Assign p.grad = g (or call
loss.backward()).
"""
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    x, y = torch.randn(16, 6), torch.randn(16, 1)
    loss = nn.functional.mse_loss(model(x), y)
    grads = torch.autograd.grad(loss, list(model.parameters()))  # <- CAUSE
    opt.step()  # <- READ
    print(float(loss), float(grads[0].norm()))
