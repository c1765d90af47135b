"""Case 664 - a view of a weight taken under no_grad is edited with grad enabled

Source: pytorch/pytorch test/test_autograd.py, test_custom_function_return_view_in_nograd / test_autograd_views_codegen (assertRaisesRegex 'A view was created in no_grad mode and is being modified inplace')
Category: views + in-place / grad mode

Reported symptom:
    RuntimeError: A view was created in no_grad mode and is being modified inplace with grad mode enabled. Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving both the view and the inplace either both inside the no_grad block (if you don't want the inplace to be tracked) or both outside (if you want the inplace to be tracked).

Root cause:
    To keep the padding token's embedding at zero the user grabs a handle to
    that row inside `torch.no_grad()` once, and later zeroes it in the training
    loop outside of no_grad. The view was created without autograd tracking but
    the in-place op runs with grad mode on, which autograd refuses because it
    cannot tell whether the modification should be recorded.

Ground truth a good tool should report:
    `pad_row.zero_()` (CAUSE/ERROR) runs with grad enabled on a view created
    under no_grad (CREATED line); wrap the zeroing in `torch.no_grad()` too.
"""
import torch
import torch.nn as nn

torch.manual_seed(0)

PAD = 0
emb = nn.Embedding(20, 6)
clf = nn.Linear(6, 3)
opt = torch.optim.SGD(list(emb.parameters()) + list(clf.parameters()), lr=0.5)

with torch.no_grad():
    pad_row = emb.weight[PAD]  # <- CREATED

tokens = torch.randint(0, 20, (8, 4))
labels = torch.randint(0, 3, (8,))

for step in range(3):
    opt.zero_grad()
    loss = nn.functional.cross_entropy(clf(emb(tokens).mean(1)), labels)
    loss.backward()
    opt.step()
    pad_row.zero_()  # <- CAUSE,ERROR
    print("step", step, "loss", round(loss.item(), 4))
