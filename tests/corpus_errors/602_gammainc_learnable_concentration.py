"""Case 602 - fitting a Gamma CDF through torch.special.gammainc with a learnable shape

Source: pytorch/pytorch test/test_autograd.py, test_not_implemented_grad (assertRaisesRegex NotImplementedError "the derivative for .* is not implemented")
Category: not-differentiable-op

Reported symptom:
    NotImplementedError: the derivative for 'igamma: input' is not implemented.

Root cause:
    The script learns the concentration `alpha` of a Gamma distribution by matching
    torch.special.gammainc(alpha, x) to an empirical CDF. gammainc (aten::igamma)
    has a derivative only with respect to its second argument; its first argument
    has no backward formula, so as soon as `alpha` requires grad the graph holds a
    node that raises NotImplementedError during backward.

Ground truth a good tool should report:
    The gammainc line feeds a tensor that requires grad (`alpha`) into the
    non-differentiable first argument of igamma; fit alpha with a differentiable
    objective instead (e.g. torch.distributions.Gamma(alpha, 1).log_prob). The
    error is raised at loss.backward().
"""
import torch

torch.manual_seed(0)

waits = torch.distributions.Gamma(3.0, 1.0).sample((256,))
sorted_waits, _ = waits.sort()
ecdf = torch.arange(1, 257, dtype=torch.float32) / 256

log_alpha = torch.zeros((), requires_grad=True)
opt = torch.optim.Adam([log_alpha], lr=0.1)

for step in range(20):
    alpha = log_alpha.exp()
    model_cdf = torch.special.gammainc(alpha, sorted_waits)  # <- CAUSE
    loss = (model_cdf - ecdf).pow(2).mean()
    opt.zero_grad()
    loss.backward()  # <- ERROR
    opt.step()

print("fitted concentration", log_alpha.exp().item())
