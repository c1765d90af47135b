"""Case 126 - DeepFool-style loop sets requires_grad on an image that stopped being a leaf

Source: https://github.com/Harry24k/adversarial-attacks-pytorch/issues/2
        "Cannot set requires_grad in deepfool" (`image.requires_grad = True` ->
        "RuntimeError: you can only change requires_grad flags of leaf
        variables."; maintainer: fixed by adding '.detach()')
Category: requires_grad on a non-leaf

Reported symptom:
    RuntimeError: you can only change requires_grad flags of leaf variables.

Root cause:
    The attack loop starts each iteration with `x_adv.requires_grad = True`
    and ends it with `x_adv = x_adv + step`.  On the first iteration x_adv is
    a fresh leaf (a clone), but the update makes it the output of an
    AddBackward0 node (it was requiring grad), i.e. a non-leaf.  At the top of
    the second iteration autograd refuses to change the flag of a non-leaf.
    The update must produce a new leaf: `x_adv = (x_adv + step).detach()`.

Ground truth a good tool should report:
    `x_adv` is a non-leaf (grad_fn=AddBackward0) created at line 70 by the
    update of the previous iteration; setting `.requires_grad = True` on it at
    line 49 fails.  Fix: detach the update at line 70.
    EXPECT: kind=requires_grad_nonleaf; tensor=x_adv; created_line=70;
            cause_line=70; error_line=49

Observed (torch 2.13.0, CPU, this script):
    exit code: 1
    stdout:
        iter 0: still classified as [2, 2, 1, 2, 1]
    exception:
        RuntimeError: you can only change requires_grad flags of leaf variables.
"""
import torch
import torch.nn as nn

torch.manual_seed(0)

classifier = nn.Sequential(nn.Flatten(), nn.Linear(2 * 6 * 6, 24), nn.ReLU(), nn.Linear(24, 3))
classifier.eval()
for p in classifier.parameters():
    p.requires_grad_(False)


def deepfool(model, images, num_classes=3, overshoot=0.02, max_iter=5):
    original = model(images).argmax(1)
    x_adv = images.clone()
    for it in range(max_iter):
        x_adv.requires_grad = True  # <- ERROR
        logits = model(x_adv)
        pred = logits.argmax(1)
        if (pred != original).all():
            break
        if it == 0:
            print(f"iter {it}: still classified as {pred.tolist()}")
        rows = torch.arange(len(images))
        grad_orig = torch.autograd.grad(logits[rows, original].sum(), x_adv, retain_graph=True)[0]
        best_dist = torch.full((len(images),), float("inf"))
        best_step = torch.zeros_like(images)
        for k in range(num_classes):
            grad_k = torch.autograd.grad(logits[:, k].sum(), x_adv, retain_graph=True)[0]
            w = grad_k - grad_orig
            f = (logits[:, k] - logits[rows, original]).detach()
            norm = w.flatten(1).norm(dim=1) + 1e-8
            dist = f.abs() / norm
            better = (dist < best_dist) & (k != original)
            step = (dist / norm).view(-1, 1, 1, 1) * w
            best_dist = torch.where(better, dist, best_dist)
            best_step = torch.where(better.view(-1, 1, 1, 1), step, best_step)
        x_adv = x_adv + (1 + overshoot) * best_step  # <- CAUSE: non-leaf (AddBackward0); needs .detach()
    return x_adv.detach()


images = torch.rand(5, 2, 6, 6)
adv = deepfool(classifier, images)
print("adversarial predictions:", classifier(adv).argmax(1).tolist())
