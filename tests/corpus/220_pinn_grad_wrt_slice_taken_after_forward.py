"""Case 220 - physics-informed NN: du/dx requested with respect to a column sliced from
the input AFTER the forward pass

Source: https://github.com/pnnl/neuromancer/issues/154 "Neuromancer Runtime Error + PINNs"
        ("One of the differentiated Tensors does not appear to have been used in the
        graph"), explained in https://github.com/ilia10000/dataset-distillation/issues/3
        (the tensor passed as `inputs` must be the very tensor used to compute the
        output; a tensor derived from it afterwards is a new node)
Category: autograd.grad input not in the graph

Reported symptom:
    RuntimeError: One of the differentiated Tensors appears to not have been used in
    the graph. Set allow_unused=True if this is the desired behavior.

Root cause:
    The collocation points are stacked into one tensor `xt` (requires_grad=True) and
    fed to the network.  The residual code then takes `x = xt[:, 0:1]` and asks for
    d u / d x.  That slice is a new view created after u was computed: u does not
    depend on it (u depends on xt, not on this SliceBackward0 output).  Either slice
    before the forward and build the input from the slices, or differentiate with
    respect to xt and take column 0 of the gradient.

Ground truth a good tool should report:
    torch.autograd.grad at line 55 is asked for the gradient w.r.t. `x`, created at
    line 66 from xt after the forward at line 65; u is not a function of x.
    Fix: grad(u, xt, ...)[0][:, 0:1], or torch.cat([x, t]) before calling the net.
    EXPECT: kind=grad_input_unused; tensor=x; cause_line=66; error_line=55

Observed (torch 2.13, CPU):
    exit code: 1
    exception:
        RuntimeError: The differentiated Tensor at index 0 appears to not have been
          used in the graph. Set allow_unused=True if this is the desired behavior.
"""
import math

import torch
import torch.nn as nn

torch.manual_seed(0)
NU = 0.01 / math.pi  # viscosity of Burgers' equation u_t + u u_x = nu u_xx


class PINN(nn.Module):
    def __init__(self, width=32):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(2, width), nn.Tanh(), nn.Linear(width, width), nn.Tanh(),
                                 nn.Linear(width, 1))

    def forward(self, xt):
        return self.net(xt)


def d(out, inp):
    return torch.autograd.grad(out, inp, grad_outputs=torch.ones_like(out), create_graph=True)[0]  # <- ERROR


model = PINN()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
x0 = torch.linspace(-1, 1, 64).unsqueeze(1)
u0 = -torch.sin(math.pi * x0)  # initial condition

for it in range(3):
    xt = torch.cat([torch.rand(256, 1) * 2 - 1, torch.rand(256, 1)], dim=1).requires_grad_(True)
    u = model(xt)  # <- CREATED: u depends on xt
    x, t = xt[:, 0:1], xt[:, 1:2]  # <- CAUSE: new views taken after the forward
    u_x, u_t = d(u, x), d(u, t)
    u_xx = d(u_x, x)
    residual = u_t + u * u_x - NU * u_xx
    ic = model(torch.cat([x0, torch.zeros_like(x0)], dim=1)) - u0
    loss = residual.pow(2).mean() + ic.pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"iter {it}: loss={loss.item():.5f}")
