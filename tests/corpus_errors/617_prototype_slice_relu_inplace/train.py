"""Case 617 - prototype classifier training loop (entry point)

Source: pytorch/pytorch test/test_autograd.py, test_inplace_on_view_weak_grad_fn (assertRaises RuntimeError for a.narrow(...).relu_() on a leaf)
Category: in-place

Reported symptom:
    RuntimeError: a view of a leaf Variable that requires grad is being used in an in-place operation.

Root cause:
    model.py, PrototypeHead.forward applies an in-place ReLU to a narrow() view of
    the `protos` Parameter while grad mode is on.

Ground truth a good tool should report:
    model.py, the `F.relu(active, inplace=True)` line of PrototypeHead.forward
    (use the out-of-place relu); reached from the forward call in the loop below.
"""
import torch
import torch.nn.functional as F

from model import ProtoNet

torch.manual_seed(0)

net = ProtoNet()
opt = torch.optim.SGD(net.parameters(), lr=0.1)
x, y = torch.randn(30, 12), torch.randint(0, 6, (30,))

for epoch in range(3):
    logits = net(x)
    loss = F.cross_entropy(logits, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"epoch {epoch} loss {loss.item():.3f}")
