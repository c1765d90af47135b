"""Correct 347 - logging gradient statistics between backward() and step()

Source: the monitoring pattern of https://github.com/simchowitzlabpublic/nano-world-model/pull/22
        (log the norm of the gradient about to be used, after backward and before
        the optimizer step) and https://github.com/tatsu-lab/alpaca_farm rl_trainer
        (`stats["loss/grad_norm"] = self._compute_grad_norm()` before `optimizer.step()`)
Category: correct script (reading .grad inside the step)

What it does:
    A small conv net for 8x8 digit-like images.  After loss.backward() the loop reads
    every parameter's .grad for per-layer norms, computes the total norm with
    get_total_norm (read-only), and also computes an input-saliency map for a few
    images with torch.autograd.grad w.r.t. the input only (parameter .grad is not
    touched) -- no create_graph, because the saliency is only logged, never
    backpropagated.  Then optimizer.step(), and
    zero_grad(set_to_none=True) at the end of the iteration.  Out-of-place results
    (softmax, clamp) are all assigned.

Ground truth a good tool should report:
    EXPECT: no findings

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        iter 0: loss 2.3005 | total grad norm 0.8675 | conv.weight 0.2408 | saliency max 0.0809 | acc 0.062
        iter 1: loss 2.2589 | total grad norm 0.8175 | conv.weight 0.2156 | saliency max 0.0819 | acc 0.125
        iter 2: loss 2.2206 | total grad norm 0.7785 | conv.weight 0.2051 | saliency max 0.0828 | acc 0.125
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SmallConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 6, 3, padding=1)
        self.fc = nn.Linear(6 * 4 * 4, 10)

    def forward(self, x):
        return self.fc(F.max_pool2d(F.relu(self.conv(x)), 2).flatten(1))


model = SmallConvNet()
optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
images = torch.rand(16, 1, 8, 8)
labels = torch.randint(0, 10, (16,))

for it in range(3):
    logits = model(images)
    loss = F.cross_entropy(logits, labels)
    loss.backward()

    per_layer = {name: p.grad.norm().item() for name, p in model.named_parameters()}
    total = torch.nn.utils.get_total_norm([p.grad for p in model.parameters()])
    probe = images[:4].clone().requires_grad_(True)
    score = model(probe).gather(1, labels[:4, None]).sum()
    saliency = torch.autograd.grad(score, probe)[0].abs()
    saliency = saliency.clamp(0, 1)
    probs = logits.detach().softmax(dim=1)
    acc = (probs.argmax(1) == labels).float().mean()

    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    print(f"iter {it}: loss {loss.item():.4f} | total grad norm {total.item():.4f} | "
          f"conv.weight {per_layer['conv.weight']:.4f} | saliency max {saliency.max().item():.4f} | acc {acc.item():.3f}")
