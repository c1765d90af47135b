"""Clean 415 - memory-saving in-place leaky activation written as a custom
autograd.Function that modifies its input and declares it with ctx.mark_dirty

What it does:
    InplaceLeaky.forward multiplies the negative entries of x by `slope` in place,
    calls ctx.mark_dirty(x), saves the (modified) output for backward and returns x.
    backward rebuilds the mask from the output's sign (slope > 0 keeps the sign).
    It is checked with torch.autograd.gradcheck on cloned double inputs, then used
    after each hidden Linear of an MLP that is trained for a few steps.

Why it is correct (not a bug):
    mark_dirty tells autograd that the input was modified in place, so the returned
    tensor is rebased onto this Function's node and its version bump is expected.
    The Function only sees non-leaf Linear outputs (never a leaf or a view of one),
    nothing else has saved those outputs (AddmmBackward0 saves its input and weight,
    not its result), and the saved tensor is the output itself, which is not
    modified afterwards.  gradcheck confirms the analytic gradient.
    EXPECT: no findings

Observed (torch 2.13, CPU):
    exit code: 0
    stdout:
        gradcheck: True
        step 0: loss=0.7276
        step 1: loss=0.6778
        step 2: loss=0.6436
        step 3: loss=0.6256
        step 4: loss=0.6139
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class InplaceLeaky(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, slope):
        x[x < 0] *= slope
        ctx.mark_dirty(x)
        ctx.save_for_backward(x)
        ctx.slope = slope
        return x

    @staticmethod
    def backward(ctx, grad_out):
        (out,) = ctx.saved_tensors
        scale = torch.where(out < 0, torch.full_like(out, ctx.slope), torch.ones_like(out))
        return grad_out * scale, None


class MLP(nn.Module):
    def __init__(self, slope=0.1):
        super().__init__()
        self.fc1, self.fc2, self.fc3 = nn.Linear(8, 32), nn.Linear(32, 32), nn.Linear(32, 2)
        self.slope = slope

    def forward(self, x):
        x = InplaceLeaky.apply(self.fc1(x), self.slope)
        x = InplaceLeaky.apply(self.fc2(x), self.slope)
        return self.fc3(x)


torch.manual_seed(0)
inp = torch.randn(6, 5, dtype=torch.double, requires_grad=True)
ok = torch.autograd.gradcheck(lambda t: InplaceLeaky.apply(t.clone(), 0.1), (inp,))
print("gradcheck:", ok)

model = MLP()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
x = torch.randn(64, 8)
y = (x[:, 0] * x[:, 1] > 0).long()
for step in range(5):
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"step {step}: loss={loss.item():.4f}")
