"""Case 122 - fake-quantised linear Function trained under CPU bfloat16 autocast, no custom_fwd/custom_bwd

Source: https://github.com/pytorch/ao/issues/4616
        "[Bug] DISABLED backward path crashes with dtype mismatch under autocast"
        (a custom linear Function: the forward matmul ran in bf16 under autocast,
        the backward multiplied the bf16 grad_output with the saved fp32 master
        weight and raised a dtype mismatch; see also pytorch/pytorch#38487 on
        custom_fwd/custom_bwd)
Category: custom-function + autocast (backward runs outside the autocast region)

Reported symptom:
    RuntimeError: expected scalar type BFloat16 but found Float
    (torch 2.13 CPU words it: expected m1 and m2 to have the same dtype, but got:
    c10::BFloat16 != float)

Root cause:
    Inside `torch.autocast("cpu", dtype=torch.bfloat16)` the `x.mm(w.t())` in the
    Function's forward is autocast to bfloat16, so the output and therefore
    grad_output are bf16.  The backward pass runs after the autocast block has
    exited (and autocast is never applied to a custom backward unless it is
    decorated with torch.amp.custom_bwd), so `grad_output.mm(w_q)` multiplies
    a bf16 tensor with the fp32 tensors saved in forward.  Decorating forward
    with @torch.amp.custom_fwd(device_type="cpu") and backward with
    @torch.amp.custom_bwd(device_type="cpu") runs backward under the same
    autocast state (or cast explicitly in backward).

Ground truth a good tool should report:
    In QuantLinearFn.backward (line 64, not decorated with custom_bwd while the
    forward ran under CPU bf16 autocast) `grad_output` is bfloat16 and `w_q`
    (saved at line 60, float32) is float32; the mm at line 67 raises.
    Fix: @torch.amp.custom_fwd/custom_bwd(device_type="cpu") on forward/backward,
    or cast the saved tensors to grad_output.dtype.
    EXPECT: kind=autocast_custom_function_dtype; function=QuantLinearFn;
            dtypes=bfloat16,float32; cause_line=64,67; error_line=67

Observed (torch 2.13.0, CPU, this script):
    exit code: 1
    stdout:
        logits dtype under autocast: torch.bfloat16
    exception:
        RuntimeError: expected m1 and m2 to have the same dtype, but got:
          c10::BFloat16 != float
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def fake_quant(w, bits=8):
    scale = w.abs().max() / (2 ** (bits - 1) - 1)
    return torch.round(w / scale) * scale


class QuantLinearFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight):
        w_q = fake_quant(weight)
        ctx.save_for_backward(x, w_q)  # <- SAVED: fp32 tensors
        return x.mm(w_q.t())  # autocast: runs in bf16

    @staticmethod
    def backward(ctx, grad_output):  # <- CAUSE: no @torch.amp.custom_bwd: autocast is off here
        x, w_q = ctx.saved_tensors
        # straight-through: d(out)/d(weight) as if there were no rounding
        grad_x = grad_output.mm(w_q)  # <- CAUSE,ERROR: bf16 grad_output @ fp32 w_q
        grad_w = grad_output.t().mm(x)
        return grad_x, grad_w


class QuantLinear(nn.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(n_out, n_in) * n_in ** -0.5)

    def forward(self, x):
        return QuantLinearFn.apply(x, self.weight)


model = nn.Sequential(QuantLinear(12, 32), nn.GELU(), QuantLinear(32, 4))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
features = torch.randn(16, 12)
labels = torch.randint(0, 4, (16,))

for epoch in range(2):
    optimizer.zero_grad()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        logits = model(features)
        loss = F.cross_entropy(logits, labels)
    if epoch == 0:
        print("logits dtype under autocast:", logits.dtype)
    loss.backward()
    optimizer.step()
print("bf16 training succeeded (bug not reproduced)")
