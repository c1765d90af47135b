"""Case 189 - a row of a learnable embedding table zeroed in place during training.

Source: a frequent discuss.pytorch.org report (paraphrased): "a leaf Variable that requires
grad is being used in an in-place operation".
Root cause: the padding row is reset on the parameter itself outside torch.no_grad().
"""
import torch

torch.manual_seed(0)
table = torch.randn(10, 4, requires_grad=True)
opt = torch.optim.SGD([table], lr=0.1)
for step in range(2):
    table[0] = 0.0  # <- CAUSE
    idx = torch.tensor([0, 3, 5])
    loss = table[idx].pow(2).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
