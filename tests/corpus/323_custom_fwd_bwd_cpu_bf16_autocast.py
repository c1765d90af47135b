"""Correct 323 - custom Functions under CPU bfloat16 autocast, decorated with torch.amp.custom_fwd / custom_bwd

Pattern: https://docs.pytorch.org/docs/stable/notes/amp_examples.html#functions-with-multiple-inputs-or-autocastable-ops
         (custom_fwd/custom_bwd so that backward runs under the forward's
         autocast state; custom_fwd(cast_inputs=torch.float32) for an op that
         must run in float32)
Category: correct (custom autograd.Function + autocast)

What it does:
    A straight-through fake-quantised linear Function is decorated with
    @torch.amp.custom_fwd(device_type="cpu") / @torch.amp.custom_bwd(...), so
    its backward matmuls are autocast to bfloat16 exactly like the forward
    ones and never mix a bf16 grad_output with the fp32 saved weight.  A
    log-sum-exp pooling Function that needs float32 is decorated with
    custom_fwd(cast_inputs=torch.float32): inside the autocast region it
    receives float32 inputs and runs with autocast disabled.  The classifier
    trains under torch.autocast("cpu", dtype=torch.bfloat16); parameters and
    their gradients stay float32.

Why a naive tool might flag it:
    grad_output of the quantised linear is bfloat16 while the saved weight is
    float32; backward returns bfloat16 gradients for float32 inputs (autograd
    casts them back); the pooling Function's input is bfloat16 but it computes
    in float32; torch.round has a zero derivative and is bypassed on purpose
    (straight-through estimator).

Ground truth a good tool should report:
    Nothing.
    EXPECT: no findings

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        hidden dtype torch.bfloat16, pooled dtype torch.float32
        grad dtypes: {torch.float32}
        loss 1.5318 -> 0.1553
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
    @torch.amp.custom_fwd(device_type="cpu")
    def forward(ctx, x, weight):
        w_q = fake_quant(weight)
        ctx.save_for_backward(x, w_q)
        return x.mm(w_q.t())

    @staticmethod
    @torch.amp.custom_bwd(device_type="cpu")
    def backward(ctx, grad_output):
        x, w_q = ctx.saved_tensors
        return grad_output.mm(w_q), grad_output.t().mm(x)


class LogSumExpPool(torch.autograd.Function):
    """Smooth max over the sequence axis, computed in float32."""

    @staticmethod
    @torch.amp.custom_fwd(device_type="cpu", cast_inputs=torch.float32)
    def forward(ctx, h, temperature):
        out = temperature * torch.logsumexp(h / temperature, dim=1)
        ctx.save_for_backward(h, out)
        ctx.temperature = temperature
        return out

    @staticmethod
    @torch.amp.custom_bwd(device_type="cpu")
    def backward(ctx, grad_out):
        h, out = ctx.saved_tensors
        weights = torch.exp((h - out.unsqueeze(1)) / ctx.temperature)
        return grad_out.unsqueeze(1) * weights, None


class QuantLinear(nn.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(n_out, n_in) * n_in ** -0.5)

    def forward(self, x):
        return QuantLinearFn.apply(x, self.weight)


class SeqClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = QuantLinear(10, 32)
        self.out = QuantLinear(32, 3)

    def forward(self, seq):                      # seq: (B, T, 10)
        b, t, _ = seq.shape
        hidden = F.gelu(self.proj(seq.reshape(b * t, -1))).reshape(b, t, -1)
        pooled = LogSumExpPool.apply(hidden, 0.5)
        return self.out(pooled), hidden, pooled


model = SeqClassifier()
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
seq = torch.randn(24, 6, 10)
labels = seq[:, :, :3].sum(1).argmax(1)
for step in range(80):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        logits, hidden, pooled = model(seq)
        loss = F.cross_entropy(logits, labels)
    if step == 0:
        first = loss.item()
        print(f"hidden dtype {hidden.dtype}, pooled dtype {pooled.dtype}")
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print("grad dtypes:", {p.grad.dtype for p in model.parameters()})
print(f"loss {first:.4f} -> {loss.item():.4f}")
