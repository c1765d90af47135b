"""Clean 401 - logistic regression from scratch: manual SGD on leaf tensors under
torch.no_grad() with grad.zero_(), then L-BFGS refinement with a closure

What it does:
    Weights w, b are plain leaf tensors with requires_grad=True.  Phase 1 updates
    them by hand: `w -= lr * w.grad` inside torch.no_grad(), then w.grad.zero_().
    Phase 2 hands the same tensors to torch.optim.LBFGS, whose closure zeroes the
    gradients, recomputes the loss and calls backward (LBFGS calls it several times
    per step).

Why it is correct (not a bug):
    In-place updates of leaves that require grad are legal inside torch.no_grad()
    (that is how optimizers do it); zeroing .grad in place after the update is the
    manual equivalent of zero_grad(); calling backward repeatedly inside the LBFGS
    closure is required by that optimizer, and each call builds a fresh graph.
    EXPECT: no findings

Observed (torch 2.13, CPU):
    exit code: 0
    stdout:
        SGD epoch 4: loss=0.4850
        SGD epoch 9: loss=0.3846
        SGD epoch 14: loss=0.3334
        SGD epoch 19: loss=0.3014
        LBFGS step 0: loss=0.2963
        LBFGS step 1: loss=0.1570
        weights: [3.46, -4.59, 1.21, -0.07, 2.61]
"""
import torch
import torch.nn.functional as F

torch.manual_seed(0)

X = torch.randn(200, 5)
true_w = torch.tensor([1.5, -2.0, 0.5, 0.0, 1.0])
y = (X @ true_w + 0.3 * torch.randn(200) > 0).float()

w = torch.zeros(5, requires_grad=True)
b = torch.zeros(1, requires_grad=True)


def nll():
    return F.binary_cross_entropy_with_logits(X @ w + b, y) + 1e-3 * w.pow(2).sum()


lr = 0.5
for epoch in range(20):
    loss = nll()
    loss.backward()
    with torch.no_grad():
        w -= lr * w.grad
        b -= lr * b.grad
    w.grad.zero_()
    b.grad.zero_()
    if epoch % 5 == 4:
        print(f"SGD epoch {epoch}: loss={loss.item():.4f}")

optimizer = torch.optim.LBFGS([w, b], lr=1.0, max_iter=20, line_search_fn="strong_wolfe")


def closure():
    optimizer.zero_grad()
    loss = nll()
    loss.backward()
    return loss


for it in range(2):
    loss = optimizer.step(closure)
    print(f"LBFGS step {it}: loss={loss.item():.4f}")
print("weights:", [round(v, 2) for v in w.detach().tolist()])
