"""Case 123 - MAML inner loop differentiates w.r.t. every parameter, one task head is unused

Source: https://github.com/tristandeleu/pytorch-meta/pull/145
        "Add `allow_unused` arg for models with task-specific parameters"
        (same failure as ShiYunyi/Meta-Weight-Net_Code-Optimization#5:
        `torch.autograd.grad(pseudo_loss, pseudo_net.parameters(), create_graph=True)`
        raising on a user's own model)
Category: autograd.grad input not reached by the output

Reported symptom:
    RuntimeError: One of the differentiated Tensors appears to not have been used
    in the graph. Set allow_unused=True if this is the desired behavior.
    (torch 2.13 words it "The differentiated Tensor at index N appears to not
    have been used in the graph.")

Root cause:
    The meta-model has a shared trunk and one classification head per task
    family ("shape" / "color").  An inner-loop adaptation step only runs the
    head of the current task, but the fast-weight update asks
    torch.autograd.grad for the gradient w.r.t. *all* named parameters.  The
    other head's weight and bias are not in the support loss's graph, so
    autograd.grad refuses.  Fix: differentiate only the parameters the task
    uses (trunk + its head), or pass allow_unused=True and keep the unused
    parameters unchanged.

Ground truth a good tool should report:
    `torch.autograd.grad(support_loss, params.values(), ...)` at line 86 lists
    `heads.color.weight` (index 4; created by nn.Linear at line 56) which the
    support loss of a "shape" task never uses: only trunk.* and heads.shape.*
    reach the loss.  Fix the input list at line 86 (or allow_unused=True).
    EXPECT: kind=grad_input_unused; tensor=heads.color.weight; index=4;
            cause_line=86; error_line=86

Observed (torch 2.13.0, CPU, this script):
    exit code: 1
    stdout:
        meta-parameters: ['trunk.0.weight', 'trunk.0.bias', 'trunk.2.weight', 'trunk.2.bias',
          'heads.color.weight', 'heads.color.bias', 'heads.shape.weight', 'heads.shape.bias']
    exception:
        RuntimeError: The differentiated Tensor at index 4 appears to not have been
          used in the graph. Set allow_unused=True if this is the desired behavior.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call

torch.manual_seed(0)


class MultiHeadLearner(nn.Module):
    def __init__(self, n_in=10, hidden=32, n_way=3):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(n_in, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.heads = nn.ModuleDict({
            "color": nn.Linear(hidden, n_way),  # <- CREATED: unused by "shape" tasks
            "shape": nn.Linear(hidden, n_way),
        })

    def forward(self, x, family):
        return self.heads[family](self.trunk(x))


def sample_task(family, n_way=3, shots=5):
    centers = torch.randn(n_way, 10) * 2
    ys = torch.arange(n_way).repeat_interleave(shots)
    xs = centers[ys] + 0.3 * torch.randn(len(ys), 10)
    return family, xs, ys


learner = MultiHeadLearner()
meta_opt = torch.optim.Adam(learner.parameters(), lr=1e-3)
inner_lr = 0.4
print("meta-parameters:", [name for name, _ in learner.named_parameters()])

for meta_step in range(2):
    meta_opt.zero_grad()
    outer_loss = 0.0
    for family in ("shape", "color"):
        family, xs, ys = sample_task(family)
        support_x, query_x = xs[::2], xs[1::2]
        support_y, query_y = ys[::2], ys[1::2]

        params = dict(learner.named_parameters())
        support_loss = F.cross_entropy(functional_call(learner, params, (support_x, family)), support_y)
        grads = torch.autograd.grad(support_loss, params.values(), create_graph=True)  # <- CAUSE,ERROR: differentiates the other task's head too
        fast = {name: p - inner_lr * g for (name, p), g in zip(params.items(), grads)}

        query_logits = functional_call(learner, fast, (query_x, family))
        outer_loss = outer_loss + F.cross_entropy(query_logits, query_y)
    outer_loss.backward()
    meta_opt.step()
print("meta-training succeeded (bug not reproduced)")
