"""Case 917 - custom autograd Function that scales the gradient, without side effects (correct)

Source: https://github.com/pytorch/pytorch/issues/1899
        "I want to transform a torch code to pytorch ... nn.GradMultiply(tensor_name, 3)"
Category: correct (invariant 7)
EXPECT: no findings

Reported symptom:
    None. A shared encoder feeds an auxiliary head through a GradMultiply
    function that down-weights the auxiliary gradient reaching the encoder.

Root cause:
    None. GradMultiply.forward returns a view-free copy of its input and
    backward only returns grad * scale; it touches no parameter, buffer or other
    state, so backward has no side effects. All parameters get gradients.

Ground truth a good tool should report:
    Nothing.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class GradMultiply(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.scale = scale
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.scale, None


encoder = nn.Sequential(nn.Linear(10, 32), nn.ReLU())
main_head = nn.Linear(32, 1)
aux_head = nn.Linear(32, 1)
params = [*encoder.parameters(), *main_head.parameters(), *aux_head.parameters()]
optimizer = torch.optim.Adam(params, lr=5e-3)

x = torch.randn(512, 10)
y_main = x[:, :3].sum(1, keepdim=True)
y_aux = x[:, 3:4] * 2

for step in range(30):
    idx = torch.randint(0, 512, (64,))
    h = encoder(x[idx])
    loss = F.mse_loss(main_head(h), y_main[idx]) + F.mse_loss(aux_head(GradMultiply.apply(h, 0.1)), y_aux[idx])
    if step == 0:
        first = loss.item()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

print(f"loss {first:.4f} -> {loss.item():.4f}")
