"""Case 206 - MAML meta-update with update_step=1: the query loss that is backpropagated
was computed inside torch.no_grad()

Source: https://github.com/dragen1860/MAML-Pytorch/issues/40
        "questions with respect to the no_grad()" -- with the number of inner updates
        set to 1: "RuntimeError: element 0 of tensors does not require grad and does
        not have a grad_fn"; a commenter explains that losses_q[-1] is then the loss
        computed under torch.no_grad().
Category: graph-cut -> autograd error (backward of a tensor without grad_fn)

Reported symptom:
    RuntimeError: element 0 of tensors does not require grad and does not have a
    grad_fn   (only when update_step == 1; larger values work)

Root cause:
    losses_q[k] collects the query loss after k inner steps.  The entries for k = 0
    and k = 1 are computed inside `with torch.no_grad():` (meant as logging only);
    entries k >= 2 are computed with grad in the `for k in range(1, update_step)`
    loop.  With update_step = 1 the loop body never runs, so the meta loss
    losses_q[-1] is the no-grad value and backward fails.

Ground truth a good tool should report:
    `meta_loss` (losses_q[-1] / task_num) has no grad_fn because the query loss after
    the first inner step was computed under the `torch.no_grad()` block; no entry
    with a graph was ever written for update_step = 1.
    EXPECT: kind=backward_without_grad_fn; tensor=meta_loss; cause_line=61;
            created_line=62; error_line=72

Observed (torch 2.13, CPU):
    exit code: 1
    exception:
        RuntimeError: element 0 of tensors does not require grad and does not have a
          grad_fn
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call

torch.manual_seed(0)


class Meta(nn.Module):
    def __init__(self, n_way=3, update_step=1, update_lr=0.4):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, n_way))
        self.update_step, self.update_lr = update_step, update_lr
        self.meta_optim = torch.optim.Adam(self.net.parameters(), lr=1e-3)

    def forward(self, x_spt, y_spt, x_qry, y_qry):
        task_num = x_spt.shape[0]
        losses_q = [0 for _ in range(self.update_step + 1)]
        names = [n for n, _ in self.net.named_parameters()]
        for i in range(task_num):
            params = dict(self.net.named_parameters())
            loss = F.cross_entropy(functional_call(self.net, params, (x_spt[i],)), y_spt[i])
            grads = torch.autograd.grad(loss, list(params.values()), create_graph=True)
            fast = {n: params[n] - self.update_lr * g for n, g in zip(names, grads)}
            with torch.no_grad():
                losses_q[0] += F.cross_entropy(self.net(x_qry[i]), y_qry[i])
            with torch.no_grad():  # <- CAUSE: the post-update query loss is the meta loss when update_step == 1
                losses_q[1] += F.cross_entropy(functional_call(self.net, fast, (x_qry[i],)), y_qry[i])  # <- CREATED
            for k in range(1, self.update_step):
                logits = functional_call(self.net, fast, (x_spt[i],))
                grads = torch.autograd.grad(F.cross_entropy(logits, y_spt[i]), list(fast.values()),
                                            create_graph=True)
                fast = {n: fast[n] - self.update_lr * g for n, g in zip(names, grads)}
                losses_q[k + 1] += F.cross_entropy(functional_call(self.net, fast, (x_qry[i],)), y_qry[i])

        meta_loss = losses_q[-1] / task_num
        self.meta_optim.zero_grad()
        meta_loss.backward()  # <- ERROR
        self.meta_optim.step()
        return [float(l) / task_num for l in losses_q]


maml = Meta(update_step=1)
for epoch in range(2):
    x_spt, x_qry = torch.randn(2, 5, 8), torch.randn(2, 10, 8)
    y_spt, y_qry = torch.randint(0, 3, (2, 5)), torch.randint(0, 3, (2, 10))
    print("epoch", epoch, "query losses per inner step:", maml(x_spt, y_spt, x_qry, y_qry))
