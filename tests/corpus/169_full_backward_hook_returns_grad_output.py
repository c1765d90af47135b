"""Case 169 - full backward hook builds its return value from grad_output: grad_input silently replaced

Source: https://github.com/pytorch/pytorch/issues/5022
        "RuntimeError: hook 'hookFunc' has returned an incorrect number of values"
        (the hook built its replacement tuple from `gradOutput`, intending to
        change the gradient flowing back; the returned value replaces grad_input)
        and https://github.com/TransformerLensOrg/TransformerLens/pull/1175 (a full
        backward hook's return value "replaces grad_input")
Category: hooks (wrong return value of a module backward hook)

Reported symptom:
    In the report the shapes differed and PyTorch raised; here the layer is
    square (16 -> 16), so shapes and counts match, nothing is raised and the
    encoder below the hooked layer silently trains on a wrong gradient.

Root cause:
    Whatever a `register_full_backward_hook` hook returns is used *in place of
    grad_input* (the gradient w.r.t. the module's inputs).  The clipping hook
    clips `grad_output` (the gradient w.r.t. the module's output) and returns
    it, so the encoder receives dL/d(output of `mix`) instead of
    dL/d(input of `mix`) = dL/d(out) @ W: the multiplication by the layer's
    weight is dropped.  `mix`'s own parameter gradients are unaffected.

Ground truth a good tool should report:
    The backward hook registered at line 63 on `mix` returns a value derived
    from grad_output at line 60; it replaces grad_input, so
    `encoder.*` gradients differ from the true gradient (same clipping
    applied to grad_input would change nothing here: max |grad_input| < 1).
    EXPECT: kind=backward_hook_return; module=mix; cause_line=60

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        mix.weight.grad unchanged by the hook: True
        encoder[0].weight.grad equals the true gradient: False
        relative error of encoder gradient: 1.85
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

encoder = nn.Sequential(nn.Linear(10, 16), nn.Tanh())
mix = nn.Linear(16, 16)
head = nn.Sequential(nn.ReLU(), nn.Linear(16, 3))
model = nn.Sequential(encoder, mix, head)
x = torch.randn(32, 10)
y = torch.randint(0, 3, (32,))

# reference gradient (no hook)
F.cross_entropy(model(x), y).backward()
true_grad = encoder[0].weight.grad.clone()
true_mix_grad = mix.weight.grad.clone()
model.zero_grad()


def clip_backward(module, grad_input, grad_output):
    # keep exploding gradients from reaching the encoder
    return tuple(g.clamp(-1.0, 1.0) for g in grad_output)  # <- CAUSE: replaces grad_input with grad_output


handle = mix.register_full_backward_hook(clip_backward)
F.cross_entropy(model(x), y).backward()
print("mix.weight.grad unchanged by the hook:", torch.allclose(mix.weight.grad, true_mix_grad))
print("encoder[0].weight.grad equals the true gradient:", torch.allclose(encoder[0].weight.grad, true_grad))
print(f"relative error of encoder gradient: "
      f"{(encoder[0].weight.grad - true_grad).norm() / true_grad.norm():.2f}")
