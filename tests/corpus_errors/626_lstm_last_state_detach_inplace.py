"""Case 626 - detach_() on a slice of the LSTM output to stop gradients

Source: pytorch/pytorch test/test_autograd.py, test_detach (assertRaisesRegex "view" for view.detach_())
Category: views

Reported symptom:
    RuntimeError: Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set as True, gradients are views of DDP buckets, and hence detach_() cannot be called on these gradients. To fix this error, please refer to the Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution.

Root cause:
    The script wants the auxiliary head not to train the encoder, so it takes the
    last time step out[:, -1] and calls detach_() on it. out[:, -1] is a view of the
    LSTM output, and autograd does not allow detaching a view in-place (the base
    would keep a graph the view no longer agrees with).

Ground truth a good tool should report:
    The `last.detach_()` line: use `last = last.detach()`.
"""
import torch
from torch import nn

torch.manual_seed(0)

lstm = nn.LSTM(5, 16, batch_first=True)
main_head = nn.Linear(16, 3)
aux_head = nn.Linear(16, 1)
opt = torch.optim.Adam([*lstm.parameters(), *main_head.parameters(), *aux_head.parameters()], lr=1e-3)

x = torch.randn(6, 10, 5)
y_main, y_aux = torch.randint(0, 3, (6,)), torch.randn(6, 1)

for step in range(3):
    out, _ = lstm(x)
    logits = main_head(out.mean(dim=1))
    last = out[:, -1]
    last.detach_()  # <- CAUSE,ERROR
    loss = nn.functional.cross_entropy(logits, y_main) + nn.functional.mse_loss(aux_head(last), y_aux)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.3f}")
