"""Case 661 - swapping a dense parameter's .data for a sparse tensor after pruning

Source: pytorch/pytorch test/test_autograd.py, test_set_data_tensorimpl_type (assertRaisesRegex 'incompatible tensor type')
Category: parameter .data manipulation

Reported symptom:
    RuntimeError: Attempted to call `variable.set_data(tensor)`, but `variable` and `tensor` have incompatible tensor type.

Root cause:
    After magnitude pruning the user tries to store the embedding table in
    sparse COO layout by assigning `emb.weight.data = pruned.to_sparse()`.
    `.data` assignment may change values, shape or dtype but not the tensor
    implementation type: a dense (strided) parameter cannot be re-pointed at a
    sparse tensor, so set_data refuses.

Ground truth a good tool should report:
    The `.data = ... .to_sparse()` assignment (CAUSE/ERROR line) tries to give
    a dense nn.Parameter a sparse layout; keep the pruned weights dense
    (multiply by the mask under no_grad) or build a new sparse module.
"""
import torch
import torch.nn as nn

torch.manual_seed(0)

emb = nn.Embedding(50, 8)
head = nn.Linear(8, 2)
opt = torch.optim.SGD(list(emb.parameters()) + list(head.parameters()), lr=0.1)

tokens = torch.randint(0, 50, (16, 5))
labels = torch.randint(0, 2, (16,))

for step in range(3):
    opt.zero_grad()
    logits = head(emb(tokens).mean(1))
    loss = nn.functional.cross_entropy(logits, labels)
    loss.backward()
    opt.step()

with torch.no_grad():
    threshold = emb.weight.abs().quantile(0.8)
    pruned = emb.weight * (emb.weight.abs() > threshold)

emb.weight.data = pruned.to_sparse()  # <- CAUSE,ERROR
print("pruned nnz:", emb.weight._nnz())
