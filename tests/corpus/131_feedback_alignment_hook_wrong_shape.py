"""Case 131 - feedback-alignment layer: a tensor hook on the layer OUTPUT returns the error projected to the INPUT size

Source: https://github.com/jordan-g/PyTorch-Feedback-Alignment-Layers/issues/1
        "RuntimeError: hook 'linear_fa_backward_hook' has changed the size of value"
        (a feedback-alignment Linear whose backward hook returned a gradient of
        the wrong size; see also jordan-g/PyTorch-Feedback-Alignment-Layers#2)
Category: hook returns a gradient of the wrong shape

Reported symptom:
    RuntimeError: hook 'feedback' has changed the size of value

Root cause:
    Feedback alignment sends the error to the layer below through a fixed
    random matrix B instead of W^T.  The author registers a tensor hook on the
    layer's output `y` and returns `grad @ B`, meaning "this is the error the
    input should receive".  But a hook on `y` replaces the gradient *of y*, so
    it must return a tensor of y's shape (batch, out); `grad @ B` has the
    input's shape (batch, in).  Autograd checks the returned value and raises
    during backward.  The hook belongs on the gradient w.r.t. the input (e.g. a
    custom Function, or a hook on the input computing from the saved grad of y).

Ground truth a good tool should report:
    The hook `feedback` registered on `y` at line 60 returns (line 58) a tensor
    of shape (16, 20) for a gradient of shape (16, 32) (B is (32, 20), created
    at line 49); the error surfaces at `loss.backward()` at line 74.
    EXPECT: kind=hook_changed_grad_shape; hook=feedback; tensor=y;
            expected_shape=(16,32); got_shape=(16,20); cause_line=60,58; error_line=74

Observed (torch 2.13.0, CPU, this script):
    exit code: 1
    stdout:
        layer-0 weight (32, 20) feedback matrix (32, 20)
    exception:
        RuntimeError: hook 'feedback' has changed the size of value
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class FALinear(nn.Module):
    """Linear layer trained with feedback alignment (fixed random backward weights)."""

    def __init__(self, n_in, n_out):
        super().__init__()
        self.linear = nn.Linear(n_in, n_out)
        self.register_buffer("B", torch.randn(n_out, n_in) / n_out ** 0.5)  # <- CREATED

    def forward(self, x):
        y = self.linear(x)
        if self.training:
            B = self.B

            def feedback(grad):
                # route the error through B instead of W^T
                return grad @ B  # <- CAUSE: shape (batch, n_in), not y's (batch, n_out)

            y.register_hook(feedback)  # <- CAUSE: hook on y must return y-shaped grad; grad @ B is x-shaped
        return y


model = nn.Sequential(FALinear(20, 32), nn.Tanh(), FALinear(32, 32), nn.Tanh(), nn.Linear(32, 5))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
inputs = torch.randn(16, 20)
targets = torch.randint(0, 5, (16,))

print("layer-0 weight", tuple(model[0].linear.weight.shape), "feedback matrix", tuple(model[0].B.shape))

for step in range(2):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(inputs), targets)
    loss.backward()  # <- ERROR
    optimizer.step()
print("feedback-alignment step done (bug not reproduced)")
