"""A compiled model, a hook added after the first step, and a print in forward.

Run it plainly: the activation hook added after the first step is not called by the two
training steps that follow (no error); only the eval call, which makes dynamo recompile,
calls it. ``gradprobe diagnose examples/compile_hooks.py`` says why, and where.
"""

import torch
from torch import nn


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.fc1(x).relu()
        if not self.training:
            print("eval batch", tuple(h.shape))
        return self.fc2(h)


torch.manual_seed(0)
net = Net()
model = torch.compile(net, backend="aot_eager")
opt = torch.optim.SGD(net.parameters(), lr=0.1)
x, y = torch.randn(32, 8), torch.randn(32, 1)

activations = []
for step in range(3):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    if step == 0:  # start logging once training runs
        net.fc1.register_forward_hook(lambda m, args, out: activations.append(out.detach()))

net.eval()
with torch.no_grad():
    model(x)

print(f"activations logged: {len(activations)}")
# expect: activations logged: 1
