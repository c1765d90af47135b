"""Case 510 - optimizer.zero_grad() never called, gradients add up across iterations

Source: https://github.com/IBM/aihwkit/issues/446
        "When running on 10 iterations currently the loss decrease then increase again"
Category: 3 - a step consumes exactly the gradients meant for it

Reported symptom:
    On the simple-layer example the loss first decreases and then climbs back up
    (1.03 -> 0.06 -> 0.87) instead of decreasing steadily.

Root cause:
    The training loop calls loss.backward() and opt.step() but never clears the
    gradients. Each backward adds its gradient to the previous ones, so every step
    applies the sum of all gradients seen so far and overshoots.

Ground truth a good tool should report:
    Each step consumes gradients accumulated over all previous iterations, not
    just the current one; zero_grad is missing in the loop (it should follow
    `opt.step()`, the line marked here, or precede loss.backward()).
"""
import torch
import torch.nn as nn

torch.manual_seed(0)

x = torch.tensor([[0.1, 0.2, 0.4, 0.3], [0.2, 0.1, 0.1, 0.3]])
y = torch.tensor([[1.0, 0.5], [0.7, 0.3]])

model = nn.Linear(4, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
loss_fn = nn.MSELoss()

for epoch in range(20):
    pred = model(x)
    loss = loss_fn(pred, y)
    loss.backward()
    opt.step()  # <- CAUSE
    print(f"epoch {epoch:2d} loss {loss.item():.6f}")

print(f"final loss {loss.item():.6f}")
